export async function startEmbeddedPostgres(_o: { dataDir: string; port?: number; log: (m: string) => void }) { return { url: 'postgres://postgres@127.0.0.1:5432/postgres', stop: async () => {} }; }
export function loadOrCreateJwtSecret(_d: string) { return 'x'.repeat(32); }
