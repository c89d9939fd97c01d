// A request's session can end after its bearer check passed: another session's new password, a logout or a
// revocation deletes it while the request waits for the user's row. Writes that act for the session check
// it again inside their transaction, after taking that row, so one the session's end went before is
// refused as a request sent after it would be (the bearer check's 403 session_not_found) and writes nothing.
import { apiError } from '../errors.js';
import { findSession } from '../../db/sessions.js';
import type { Queryable } from '../../db/pool.js';

/** Throws 403 session_not_found when the session is gone; null (a token that names no session) has none to end. */
export async function assertSessionStillLive(q: Queryable, sessionId: string | null): Promise<void> {
  if (sessionId && !(await findSession(q, sessionId))) throw apiError('session_not_found');
}
