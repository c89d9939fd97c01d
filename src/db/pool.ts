import pg from 'pg';
export function createPool(o: { url: string; max: number; namespace: string; applicationName?: string }) {
  return new pg.Pool({ connectionString: o.url, max: o.max, options: `-c search_path=${o.namespace}`, application_name: o.applicationName });
}
