// Calling a Postgres function hook (docs/hooks.md#postgres-functions): `select <schema>.<function>($1::jsonb)`
// under a 2 s statement timeout, as the original. Inside a request's transaction the call runs on that
// transaction's own client (as the original passes its tx), so the request never waits for a second
// connection while holding one (the pool wedge of issue 11); otherwise it takes one pooled connection for
// a transaction of its own, so the SET LOCAL ends with it.
import type pg from 'pg';
import { tx, type Queryable } from '../../db/pool.js';
import { databaseFault } from '../../db/faults.js';
import { apiError } from '../errors.js';
import { NO_ANSWER, parseAnswer } from './answer.js';
import { hookErrorOf } from './errors.js';

/** The original's statement timeout for a hook function (internal/hooks/hookspgfunc). */
export const PG_HOOK_TIMEOUT_MS = 2000;

/** Every column as the text PostgreSQL sent, unparsed. */
const RESULT_AS_TEXT = { getTypeParser: () => (text: string) => text } as unknown as pg.CustomTypesConfig;

export interface PgHookCall {
  pool: pg.Pool;
  /** the request's transaction client when the caller holds one; the pool (or nothing) otherwise */
  q?: Queryable;
  /** `schema.function`, both checked identifiers (targets.ts) */
  qualifiedName: string;
  uri: string;
  payload: string;
  signal?: AbortSignal;
  /** told why the function failed, for the log (the client gets only the original's message) */
  onFailure?: (err: unknown) => void;
}

export async function callPgHook(call: PgHookCall): Promise<unknown> {
  const run = async (c: pg.PoolClient) => {
    await c.query(`set local statement_timeout to ${PG_HOOK_TIMEOUT_MS}`);
    // The payload untyped, as the original passes it: PostgreSQL takes it as the function's own argument type,
    // so a function declared (event json) works as well as one declared (event jsonb). The result is taken
    // as text whatever its type, as the original reads it, and parsed as JSON below: a function returning
    // text holding JSON is read like one returning jsonb, and a jsonb null is an answer, unlike SQL null.
    const { rows } = await c.query<{ output: string | null }>({
      text: `select ${call.qualifiedName}($1) as output`,
      values: [call.payload],
      types: RESULT_AS_TEXT,
    });
    await c.query('set local statement_timeout to default');
    return rows[0]?.output ?? null;
  };
  let output: string | null;
  try {
    output = isClient(call.q) ? await run(call.q) : await tx(call.pool, run, call.signal);
  } catch (err) {
    // A lost or saturated database stays a 503; the function's own failure (an exception, the timeout,
    // a missing function) is the original's 500.
    // The hook's own statement timeout looks like DB_STATEMENT_TIMEOUT's (a 503) but is the function's fault.
    const timedOut = (err as { code?: unknown }).code === '57014';
    if (!timedOut && databaseFault(err)) throw err;
    if (call.signal?.aborted) throw err;
    call.onFailure?.(err);
    // The function's error stays the cause, as the original keeps it: a RAISE it meant for the client
    // (P0001, or USING ERRCODE = 'PT403') is then answered in PostgREST's shape (http/postgres-error.ts).
    throw apiError('hook_failed', `Error running hook URI: ${call.uri}`).causedBy(err);
  }
  if (output === null) return NO_ANSWER;
  const answer = parseAnswer(output);
  const hookError = hookErrorOf(answer);
  if (hookError) throw hookError;
  return answer;
}

function isClient(q: Queryable | undefined): q is pg.PoolClient {
  return q !== undefined && 'release' in q;
}
