// Errors the operator's own database code raises on purpose (docs/errors.md#errors-raised-in-the-database):
// a trigger on auth.users that refuses a sign-up with RAISE, a constraint the operator added. Under the
// initial API version the original answers them as PostgREST does: the SQLSTATE, message, hint and
// detail as the body, and the status a `PTxxx` code names. Everything else stays an unexpected failure.
import pg from 'pg';

/** raise_exception and the integrity-constraint violations: 500, with the database's message. */
const PUBLIC_STATES = new Set(['P0001', '23000', '23001', '23502', '23503', '23505', '23514', '23P01']);
/** `PT403` from RAISE ... USING ERRCODE = 'PT403': the status is the code's three digits. */
const STATUS_STATE = /^PT([45]\d\d)$/;

export interface PublicPostgresError {
  status: number;
  body: { code: string; message: string; hint?: string; detail?: string };
}

export function publicPostgresError(err: unknown): PublicPostgresError | null {
  if (!(err instanceof pg.DatabaseError) || !err.code) return null;
  const named = STATUS_STATE.exec(err.code);
  if (!named && !PUBLIC_STATES.has(err.code)) return null;
  return {
    status: named ? Number(named[1]) : 500,
    body: {
      code: err.code,
      message: err.message,
      ...(err.hint ? { hint: err.hint } : {}),
      ...(err.detail ? { detail: err.detail } : {}),
    },
  };
}
