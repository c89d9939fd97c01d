// Concurrency tests put requests in a chosen order without guessing at timing: the test holds a user's row
// lock, starts each request once the ones before it wait on a lock (as PostgreSQL reports them in
// pg_stat_activity), then lets them all go, and PostgreSQL grants the lock in that order.
import type pg from 'pg';
import type { Reply, TestService } from './server.js';
import { adminToken } from './admin.js';
import { claimsOf } from './mfa.js';

export interface HeldLock {
  /** how many rows the holding statement found or changed */
  readonly rows: number;
  /**
   * Resolves once `n` sessions of this database wait on a lock, or once `done` (a request that may not need
   * to wait) has settled; throws if neither happens.
   */
  waiters(n: number, done?: { settled: boolean }): Promise<void>;
  /** Commits the holding transaction: the waiters go on, in the order they queued. */
  release(): Promise<void>;
}

/** Runs `sql` (a `for update`, a `lock table`, an uncommitted write) in a transaction of the test's own, left open until release(). */
export async function holdLock(db: pg.Pool, sql: string, params: unknown[] = []): Promise<HeldLock> {
  const holder = await db.connect();
  await holder.query('begin');
  const { rowCount } = await holder.query(sql, params);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    try {
      await holder.query('commit');
    } finally {
      holder.release();
    }
  };
  return {
    rows: rowCount ?? 0,
    async waiters(n, done) {
      for (let i = 0; i < 400; i++) {
        const { rows } = await db.query(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
        );
        if (rows[0].n >= n || done?.settled) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await release();
      throw new Error(`${n} requests never waited on the lock`);
    },
    release,
  };
}

/** Locks the user's row (`for update`, as the service's lockUserById does) in a transaction of its own. */
export function holdUserLock(db: pg.Pool, userId: string): Promise<HeldLock> {
  return holdLock(db, 'select 1 from users where id = $1 for update', [userId]);
}

/**
 * Starts `requests` one after another behind `held`, each once the ones before it wait on a lock, then
 * releases it: they take the lock in this order. Resolves their replies, in the same order.
 */
export async function inOrderBehind<R>(held: HeldLock, requests: Array<() => Promise<R>>): Promise<R[]> {
  const replies: Promise<R>[] = [];
  try {
    for (const [i, send] of requests.entries()) {
      const reply = send();
      reply.catch(() => undefined); // awaited below; must not go unhandled meanwhile
      replies.push(reply);
      await held.waiters(i + 1);
    }
  } finally {
    await held.release();
  }
  return Promise.all(replies);
}

/**
 * Starts `requests` one after another behind the user's row lock, each once the ones before it wait on it,
 * then lets them go: they take the row in this order. Resolves their replies, in the same order.
 */
export async function inOrderBehindUserLock(db: pg.Pool, userId: string, requests: Array<() => Promise<Reply>>): Promise<Reply[]> {
  return inOrderBehind(await holdUserLock(db, userId), requests);
}

/**
 * `request` made while an admin deletes the user (`soft`: should_soft_delete): the deletion takes the user's row
 * first, the request (past its own look-ups) waits behind it. Resolves the request's reply; the deletion must
 * have succeeded.
 */
export async function behindDeletion(api: TestService, userId: string, soft: boolean, request: () => Promise<Reply>): Promise<Reply> {
  const token = await adminToken();
  const [deleted, reply] = await inOrderBehindUserLock(api.db, userId, [
    () => api.request('DELETE', `/admin/users/${userId}`, { token, body: { should_soft_delete: soft } }),
    request,
  ]);
  if (deleted.status !== 200) throw new Error(`the deletion answered ${deleted.status}: ${deleted.text}`);
  return reply;
}

/** A row of the user's that a request may lock, taken by afterSessionEnded together with the user's. */
export interface UserChildRow {
  table: 'mfa_factors' | 'webauthn_credentials' | 'oauth_consents' | 'sessions';
  id: string;
}

/**
 * `request`, made with `token`, answered after that token's session ended while the request waited: it passes
 * the bearer check and waits on the user's row, which the test holds; the session's row is then deleted (as a
 * logout, a revocation or another session's new password deletes it) and the user's row let go. With `child`,
 * that row of the user's is held too, so the request waits whichever of the two it takes first.
 */
export async function afterSessionEnded(
  api: TestService,
  userId: string,
  token: string,
  request: () => Promise<Reply>,
  child?: UserChildRow,
): Promise<Reply> {
  const sessionId = claimsOf(token).session_id;
  const held = child
    ? await holdLock(api.db, `select 1 from users u join ${child.table} r on r.user_id = u.id where u.id = $1 and r.id = $2 for update`, [
        userId,
        child.id,
      ])
    : await holdUserLock(api.db, userId);
  let reply: Promise<Reply>;
  try {
    if (held.rows !== 1) throw new Error(`the user's ${child?.table} row ${child?.id} was not there to hold`);
    reply = request();
    reply.catch(() => undefined); // awaited below; must not go unhandled meanwhile
    await held.waiters(1);
    const { rowCount } = await api.db.query('delete from sessions where id = $1', [sessionId]);
    if (rowCount !== 1) throw new Error(`the token's session ${sessionId} was not there to end`);
  } finally {
    await held.release();
  }
  return reply;
}
