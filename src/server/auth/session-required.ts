// What only a session can do (MFA enrolment, verification, unenrolment): a token that names no session,
// which a user endpoint otherwise accepts (docs/api.md#who-may-call), is refused here. The original
// answers these with a 500; a 403 says what is wrong.
import { apiError } from '../errors.js';
import type { Authenticated } from './principal.js';

export function requireSession(principal: Authenticated): NonNullable<Authenticated['session']> {
  if (!principal.session) throw apiError('session_required');
  return principal.session;
}
