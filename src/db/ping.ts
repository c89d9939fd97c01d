// The readiness check's database statement: the cheapest round trip through a pool (src/server/routes/ready.ts).
import type { Queryable } from './pool.js';

export async function ping(q: Queryable): Promise<void> {
  await q.query('select 1');
}
