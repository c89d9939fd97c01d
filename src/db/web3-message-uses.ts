// The Web3 sign-in messages already used (sql/00009_web3_message_uses.sql, docs/web3.md#replay).
import type { Queryable } from './pool.js';

/**
 * Records the message's hash as used until `usableUntil`; false when it was used already. Inside the
 * sign-in's transaction: a concurrent use of the same message waits on the key, then finds it taken
 * (or, if the first sign-in rolled back, takes it).
 */
export async function claimWeb3Message(q: Queryable, messageHash: Buffer, usableUntil: Date): Promise<boolean> {
  const { rowCount } = await q.query(
    `insert into web3_message_uses (message_hash, usable_until) values ($1, $2) on conflict (message_hash) do nothing`,
    [messageHash, usableUntil],
  );
  return rowCount === 1;
}
