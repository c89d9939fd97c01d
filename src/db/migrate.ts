export async function migrate(_url: string, _ns: string, _log?: (m: string) => void) { return { applied: 0 }; }
