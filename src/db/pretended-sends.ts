// The sends pretended to an address with no account (src/server/limits/pretended-sends.ts): one
// rate_limits row each, keyed by a keyed hash of the address (never the address), updated_at the time of
// the send. rate_limits already holds the shared counters; these rows are its 'pretended_send:' keys.
import type { Queryable } from './pool.js';

export const PRETENDED_SEND_PREFIX = 'pretended_send:';

/**
 * Records a send at `at` unless one was recorded after `notBefore`; false when one was. One atomic
 * statement: a concurrent record of the same key waits for it (inside a transaction, for its end) and then
 * finds it, as concurrent sends to one user wait on the user's row lock.
 */
export async function recordPretendedSend(q: Queryable, key: string, at: Date, notBefore: Date): Promise<boolean> {
  const { rowCount } = await q.query({
    name: 'pretended_send_record',
    text: `insert into rate_limits (key, updated_at) values ($1, $2)
           on conflict (key) do update set updated_at = excluded.updated_at
           where rate_limits.updated_at <= $3
           returning updated_at`,
    values: [key, at, notBefore],
  });
  return rowCount === 1;
}

/** When the last send was pretended under `key`; null when none is remembered. */
export async function lastPretendedSend(q: Queryable, key: string): Promise<Date | null> {
  const { rows } = await q.query<{ updated_at: Date }>({
    name: 'pretended_send_last',
    text: `select updated_at from rate_limits where key = $1`,
    values: [key],
  });
  return rows[0]?.updated_at ?? null;
}
