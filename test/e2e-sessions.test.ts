// Sessions through the real @supabase/auth-js client: refreshSession, updateUser (data, email, password
// with a reauthentication nonce), signOut (then refresh fails while the access token still decodes),
// and an anonymous user made permanent.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { authClient } from './helpers/auth-client.js';
import { startSmtpServer } from './helpers/smtp.js';
import { uniqueEmail } from './helpers/accounts.js';
import { codeIn, confirmedUser, PASSWORD, pathOf } from './helpers/users.js';

const smtp = await startSmtpServer();
const api = await startTestService({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
  AUTH_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
});

const client = () => authClient(api.url);
const mailTo = (to: string, marker: string) => smtp.waitForMail((m) => m.to === to && m.html.includes(marker));

async function signedIn() {
  const auth = client();
  const s = await confirmedUser(api);
  const { data, error } = await auth.signInWithPassword({ email: s.user.email, password: PASSWORD });
  if (error) throw error;
  return { auth, email: s.user.email, session: data.session };
}

t.test('refreshSession rotates the refresh token and keeps the user', async (t) => {
  const { auth, session } = await signedIn();
  const { data, error } = await auth.refreshSession();
  t.equal(error, null);
  t.not(data.session!.refresh_token, session.refresh_token);
  t.equal(data.user!.id, session.user.id);
  const { data: me } = await auth.getUser();
  t.equal(me.user!.id, session.user.id);
  const reused = await client().refreshSession({ refresh_token: session.refresh_token });
  t.equal(reused.data.session!.refresh_token, data.session!.refresh_token, 'the previous token answers its child');
});

t.test('updateUser: data, then an email change confirmed on both addresses by code', async (t) => {
  const { auth, email } = await signedIn();
  const updated = await auth.updateUser({ data: { theme: 'dark' } });
  t.equal(updated.error, null);
  t.equal(updated.data.user!.user_metadata.theme, 'dark');
  const newEmail = uniqueEmail('e2e-new');
  const changed = await auth.updateUser({ email: newEmail });
  t.equal(changed.error, null);
  t.equal(changed.data.user!.new_email, newEmail);
  t.ok(changed.data.user!.email_change_sent_at);
  const toNew = await mailTo(newEmail, 'email address change');
  const toCurrent = await mailTo(email, 'email address change');
  const half = await client().verifyOtp({ email, token: codeIn(toCurrent.text), type: 'email_change' });
  t.equal(half.error, null);
  t.equal(half.data.session, null, 'the first half gives no session');
  const done = await client().verifyOtp({ email: newEmail, token: codeIn(toNew.text), type: 'email_change' });
  t.equal(done.error, null);
  t.equal(done.data.user!.email, newEmail);
  t.equal((await client().signInWithPassword({ email: newEmail, password: PASSWORD })).error, null);
});

t.test('reauthenticate, then updateUser password with the nonce', async (t) => {
  const { auth, email } = await signedIn();
  const refused = await auth.updateUser({ password: 'E2e-new-password-9' });
  t.equal(refused.error?.code, 'reauthentication_needed');
  const sent = await auth.reauthenticate();
  t.equal(sent.error, null);
  const nonce = codeIn((await mailTo(email, 'Confirm reauthentication')).text);
  const ok = await auth.updateUser({ password: 'E2e-new-password-9', nonce });
  t.equal(ok.error, null);
  t.equal((await client().signInWithPassword({ email, password: 'E2e-new-password-9' })).error, null);
});

t.test('signOut: refresh fails afterwards, the access token still decodes but its session is gone', async (t) => {
  const { auth, session } = await signedIn();
  t.equal((await auth.signOut()).error, null);
  const again = await client().refreshSession({ refresh_token: session.refresh_token });
  t.equal(again.error?.code, 'refresh_token_not_found');
  const claims = JSON.parse(Buffer.from(session.access_token.split('.')[1], 'base64url').toString());
  t.equal(claims.sub, session.user.id);
  t.ok(claims.exp > Date.now() / 1000, 'not expired');
  const me = await client().getUser(session.access_token);
  t.equal(me.data.user, null);
  t.equal(me.error?.name, 'AuthSessionMissingError', 'auth-js reads 403 session_not_found as signed out');
  const raw = await api.request('GET', '/user', { token: session.access_token });
  t.strictSame(raw.body, { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' });
});

t.test('anonymous user: email and password, verified by link, becomes permanent', async (t) => {
  const auth = client();
  const anon = await auth.signInAnonymously();
  t.equal(anon.error, null);
  t.equal(anon.data.user!.is_anonymous, true);
  const email = uniqueEmail('e2e-anon');
  const updated = await auth.updateUser({ email, password: 'Anon-password-7' });
  t.equal(updated.error, null);
  t.equal(updated.data.user!.new_email, email);
  const mail = await mailTo(email, 'email address change');
  const followed = await api.request('GET', pathOf(mail.link!));
  t.match(followed.headers.get('location'), /#access_token=/);
  const signIn = await client().signInWithPassword({ email, password: 'Anon-password-7' });
  t.equal(signIn.error, null);
  t.equal(signIn.data.user!.id, anon.data.user!.id);
  t.equal(signIn.data.user!.is_anonymous, false);
  t.equal(signIn.data.user!.app_metadata.provider, 'email');
});

t.test('resend: a pending signup confirmation is sent again', async (t) => {
  const auth = client();
  const email = uniqueEmail('e2e-resend');
  t.equal((await auth.signUp({ email, password: PASSWORD })).error, null);
  await mailTo(email, 'confirm');
  await api.db.query(`update users set confirmation_sent_at = now() - interval '1 day' where email = $1`, [email]);
  const res = await auth.resend({ type: 'signup', email, options: { emailRedirectTo: 'http://localhost:3000/welcome' } });
  t.equal(res.error, null);
  const mail = await mailTo(email, 'confirm');
  t.match(mail.link, /redirect_to=http:\/\/localhost:3000\/welcome/);
  const unknown = await client().resend({ type: 'signup', email: uniqueEmail('nobody') });
  t.equal(unknown.error, null, 'no enumeration');
});
