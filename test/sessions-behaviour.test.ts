// Sessions and refresh tokens as the original answers them, checked black-box: what a sign-in reports
// as its time (docs/tokens-and-sessions.md#sessions).
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { signIn, signUp, uniqueEmail, type Session } from './helpers/accounts.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
t.teardown(() => api.stop());

const sessionIdOf = (s: Session): string => JSON.parse(Buffer.from(s.access_token.split('.')[1], 'base64url').toString()).session_id;

/** The session's creation time as the user JSON writes a time read from the database (microseconds, trailing zeros dropped). */
async function sessionCreatedAt(s: Session): Promise<string> {
  const { rows } = await api.db.query<{ at: string }>(
    `select regexp_replace(to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '\\.?0+$', '') || 'Z' as at
     from sessions where id = $1`,
    [sessionIdOf(s)],
  );
  return rows[0].at;
}

t.test('last_sign_in_at in a sign-in answer is the sign-in time to the microsecond, as every other time of the answer', async (t) => {
  const email = uniqueEmail();
  const signIns: Record<string, () => Promise<Session>> = {
    'sign-up': () => signUp(api, email),
    'password grant': () => signIn(api, email),
    anonymous: async () => (await api.request('POST', '/signup', { body: {} })).body,
  };
  for (const [name, signingIn] of Object.entries(signIns)) {
    const s = await signingIn();
    const signedInAt = (s.user as { last_sign_in_at?: string }).last_sign_in_at;
    // The time the session was created: a time the database keeps whole, where the application's clock had milliseconds only.
    t.equal(signedInAt, await sessionCreatedAt(s), `${name}: the instant the session records as its creation`);
    t.match(signedInAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/, `${name}: RFC 3339, at most microseconds`);
    const me = await api.request('GET', '/user', { token: s.access_token });
    t.equal(me.body.last_sign_in_at, signedInAt, `${name}: GET /user reads the same time`);
  }
});
