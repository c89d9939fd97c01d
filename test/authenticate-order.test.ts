// The order of bearer authentication's checks when several fail at once (src/server/auth/bearer.ts).
// The user, the session and the identities are read in one statement, and session_id is validated before
// it; the error a client sees must still be the first failing check in the original's order:
// user_not_found, then the session_id UUID check, then session_not_found, then user_banned.
import t from 'tap';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { signedToken } from './helpers/admin.js';
import { signUp } from './helpers/accounts.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const USER_NOT_FOUND = { code: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' };
const BAD_SESSION_ID = { code: 403, error_code: 'bad_jwt', msg: 'invalid claim: session_id claim must be a UUID' };
const SESSION_NOT_FOUND = { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' };
const BANNED = { code: 403, error_code: 'user_banned', msg: 'User is banned' };
const SESSION_ID_NOT_A_STRING = {
  code: 403,
  error_code: 'bad_jwt',
  msg: 'invalid JWT: unable to parse or verify signature, token is malformed: could not JSON decode claim: json: cannot unmarshal number into Go struct field AccessTokenClaims.session_id of type string',
};

t.test('the first failing check answers, on every endpoint that authenticates', async (t) => {
  const known = await signUp(api);
  const claims = decodeJwt(known.access_token);
  const banned = await signUp(api);
  const bannedClaims = decodeJwt(banned.access_token);
  await api.db.query("update users set banned_until = now() + interval '1 hour' where id = $1", [banned.user.id]);

  const cases: Array<[string, Record<string, unknown>, object]> = [
    ['unknown user + bad session_id', { ...claims, sub: UNKNOWN, session_id: 'nope' }, USER_NOT_FOUND],
    // Not a check of the order: the original's parser cannot decode a number into its session_id string.
    ['unknown user + session_id not a string', { ...claims, sub: UNKNOWN, session_id: 12 }, SESSION_ID_NOT_A_STRING],
    ['unknown user + unknown session', { ...claims, sub: UNKNOWN, session_id: UNKNOWN }, USER_NOT_FOUND],
    ['unknown user + existing session', { ...claims, sub: UNKNOWN }, USER_NOT_FOUND],
    ['known user + bad session_id', { ...claims, session_id: 'nope' }, BAD_SESSION_ID],
    ['known user + unknown session', { ...claims, session_id: UNKNOWN }, SESSION_NOT_FOUND],
    ['banned user + bad session_id', { ...bannedClaims, session_id: 'nope' }, BAD_SESSION_ID],
    ['banned user + unknown session', { ...bannedClaims, session_id: UNKNOWN }, SESSION_NOT_FOUND],
    ['banned user + own session', bannedClaims, BANNED],
  ];
  const endpoints: Array<[string, string, unknown]> = [
    ['GET', '/user', undefined],
    ['PUT', '/user', { data: { a: 1 } }],
    ['POST', '/logout', undefined],
    ['GET', '/reauthenticate', undefined],
  ];
  for (const [name, payload, expected] of cases) {
    const token = await signedToken(payload);
    for (const [method, path, body] of endpoints) {
      const res = await api.request(method, path, { token, body });
      t.strictSame([res.status, res.body], [403, expected], `${name}: ${method} ${path}`);
    }
  }
  // An upper-case session_id is a UUID, and finds its session (Postgres compares uuids, not text).
  const upper = await api.request('GET', '/user', {
    token: await signedToken({ ...claims, session_id: String(claims.session_id).toUpperCase() }),
  });
  t.equal(upper.status, 200);
  t.equal(upper.body.id, known.user.id);
});
