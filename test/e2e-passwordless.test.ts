// The passwordless flows driven by the real @supabase/auth-js client against the real service, SMTP
// server and SMS gateway fake: what an app does, end to end.
import t from 'tap';
import { authClient } from './helpers/auth-client.js';
import { startMailStack, linkOf, codeOf, fragmentOf, insertUser, plantToken } from './helpers/passwordless.js';

const stack = await startMailStack({ AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' }, { sms: true });
const { api, smtp } = stack;
const sms = stack.sms!;
t.teardown(() => stack.stop());

/** A client as an app would hold one, with an in-memory storage (which also keeps the PKCE verifier). */
const client = (flowType: 'implicit' | 'pkce' = 'implicit') => authClient(api.url, { flowType });
const smsCode = (body: string) => /(\d{6})/.exec(body)![1];
const allowMail = (email: string) =>
  api.db.query('update users set recovery_sent_at = null, confirmation_sent_at = null where email = $1', [email]);

t.test('signInWithOtp (email): the 6-digit code with verifyOtp type email', async (t) => {
  const auth = client();
  const { error } = await auth.signInWithOtp({ email: 'ana@example.com', options: { data: { name: 'Ana' } } });
  t.equal(error, null);
  const { data, error: verifyError } = await auth.verifyOtp({
    email: 'ana@example.com',
    token: codeOf(await smtp.waitForMail('ana@example.com')),
    type: 'email',
  });
  t.equal(verifyError, null);
  t.equal(data.user?.email, 'ana@example.com');
  t.equal(data.user?.user_metadata.name, 'Ana');
  t.equal((await auth.getUser()).data.user?.id, data.user?.id, 'the client holds the session');
});

t.test("signInWithOtp (email): following the link, the fragment's session works in the client", async (t) => {
  await allowMail('ana@example.com');
  const auth = client();
  t.equal(
    (
      await auth.signInWithOtp({
        email: 'ana@example.com',
        options: { emailRedirectTo: 'http://localhost:3000/home', shouldCreateUser: false },
      })
    ).error,
    null,
  );
  const mail = await smtp.waitForMail('ana@example.com');
  const res = await api.request('GET', linkOf(mail).path);
  const fragment = fragmentOf(res.headers.get('location'));
  t.ok(res.headers.get('location')!.startsWith('http://localhost:3000/home#'));
  t.equal(fragment.type, 'magiclink');
  const { data, error } = await auth.setSession({ access_token: fragment.access_token, refresh_token: fragment.refresh_token });
  t.equal(error, null);
  t.equal(data.user?.email, 'ana@example.com');
});

t.test('signInWithOtp shouldCreateUser false for an unknown address: otp_disabled', async (t) => {
  const { error } = await client().signInWithOtp({ email: 'nobody@example.com', options: { shouldCreateUser: false } });
  t.equal(error?.status, 422);
  t.equal(error?.code, 'otp_disabled');
  t.equal(error?.message, 'Signups not allowed for otp');
});

t.test('signInWithOtp (phone) through the SMS gateway, verifyOtp type sms', async (t) => {
  const auth = client();
  t.equal((await auth.signInWithOtp({ phone: '+15550101010' })).error, null);
  const code = smsCode((await sms.waitForMessage('15550101010')).body);
  const { data, error } = await auth.verifyOtp({ phone: '+15550101010', token: code, type: 'sms' });
  t.equal(error, null);
  t.equal(data.user?.phone, '15550101010');
  t.ok(data.user?.phone_confirmed_at);
  const again = await client().signInWithOtp({ phone: '+15550101010' });
  t.equal(again.error?.code, 'over_sms_send_rate_limit', 'within SMS_MAX_FREQUENCY');
  await api.db.query("update users set confirmation_sent_at = null where phone = '15550101010'");
  const confirmed = await client().signInWithOtp({ phone: '+15550101010' });
  t.equal(confirmed.error, null);
  t.equal(confirmed.data.messageId, (await sms.waitForMessage('15550101010')).id, 'a confirmed number gets the gateway message id');
});

t.test('verifyOtp type signup after signUp, and wrong codes', async (t) => {
  const auth = client();
  t.equal((await auth.signUp({ email: 'sam@example.com', password: 'secret-password' })).error, null);
  const code = codeOf(await smtp.waitForMail('sam@example.com'));
  const wrong = await auth.verifyOtp({ email: 'sam@example.com', token: code === '000000' ? '111111' : '000000', type: 'signup' });
  t.equal(wrong.error?.status, 403);
  t.equal(wrong.error?.code, 'otp_expired');
  t.equal(wrong.error?.message, 'Token has expired or is invalid');
  const { data, error } = await auth.verifyOtp({ email: 'sam@example.com', token: code, type: 'signup' });
  t.equal(error, null);
  t.ok(data.user?.email_confirmed_at);
});

t.test('verifyOtp with token_hash: invite and magiclink', async (t) => {
  const id = await insertUser(api.db, { email: 'ivy@example.com', invited: true });
  const invite = await plantToken(api.db, id, 'confirmation_token', 'ivy@example.com');
  const invited = await client().verifyOtp({ token_hash: invite.linkToken, type: 'invite' });
  t.equal(invited.error, null);
  t.equal(invited.data.user?.id, id);
  await allowMail('ivy@example.com');
  t.equal((await client().signInWithOtp({ email: 'ivy@example.com' })).error, null);
  const mail = await smtp.waitForMail('ivy@example.com');
  const magic = await client().verifyOtp({ token_hash: linkOf(mail).token, type: 'magiclink' });
  t.equal(magic.error, null);
  t.equal(magic.data.user?.id, id);
});

t.test('resetPasswordForEmail, verifyOtp type recovery, then updateUser sets the new password', async (t) => {
  await allowMail('sam@example.com');
  const auth = client();
  t.equal((await auth.resetPasswordForEmail('sam@example.com', { redirectTo: 'http://localhost:3000/reset' })).error, null);
  const mail = await smtp.waitForMail('sam@example.com');
  t.equal(linkOf(mail).redirectTo, 'http://localhost:3000/reset');
  const { data, error } = await auth.verifyOtp({ email: 'sam@example.com', token: codeOf(mail), type: 'recovery' });
  t.equal(error, null);
  t.equal(data.session?.user.email, 'sam@example.com');
  t.equal((await auth.getUser()).data.user?.email, 'sam@example.com');
  const updated = await auth.updateUser({ password: 'brand-new-pass-7' });
  t.equal(updated.error, null, 'the recovery session may set a password');
  const signedIn = await client().signInWithPassword({ email: 'sam@example.com', password: 'brand-new-pass-7' });
  t.equal(signedIn.error, null, 'the new password signs in');
  t.equal((await client().resetPasswordForEmail('nobody@example.com')).error, null, 'unknown addresses look the same');
});

t.test('flowType pkce: signInWithOtp link → ?code= → exchangeCodeForSession', async (t) => {
  await allowMail('ana@example.com');
  const auth = client('pkce');
  t.equal((await auth.signInWithOtp({ email: 'ana@example.com', options: { emailRedirectTo: 'http://localhost:3000/cb' } })).error, null);
  const mail = await smtp.waitForMail('ana@example.com');
  t.match(linkOf(mail).token, /^pkce_/);
  const res = await api.request('GET', linkOf(mail).path);
  const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
  const { data, error } = await auth.exchangeCodeForSession(code);
  t.equal(error, null);
  t.equal(data.user?.email, 'ana@example.com');
  t.equal((await auth.getUser()).data.user?.email, 'ana@example.com');
  const replay = await client('pkce').exchangeCodeForSession(code);
  t.equal(replay.error?.name, 'AuthPKCECodeVerifierMissingError', 'another client has no verifier');
});

t.test('flowType pkce: resetPasswordForEmail → exchangeCodeForSession reports the recovery', async (t) => {
  await allowMail('sam@example.com');
  const auth = client('pkce');
  t.equal((await auth.resetPasswordForEmail('sam@example.com')).error, null);
  const res = await api.request('GET', linkOf(await smtp.waitForMail('sam@example.com')).path);
  const { data, error } = await auth.exchangeCodeForSession(new URL(res.headers.get('location')!).searchParams.get('code')!);
  t.equal(error, null);
  t.equal(data.user?.email, 'sam@example.com');
  // redirectType is not in auth-js 2.109's declared type, but it is in the value it returns.
  t.equal((data as { redirectType?: string }).redirectType, 'recovery', 'auth-js kept the recovery marker with the verifier');
});

t.test('signInAnonymously', async (t) => {
  const auth = client();
  const { data, error } = await auth.signInAnonymously({ options: { data: { cart: 3 } } });
  t.equal(error, null);
  t.equal(data.user?.is_anonymous, true);
  t.equal(data.user?.user_metadata.cart, 3);
  t.equal((await auth.getUser()).data.user?.is_anonymous, true);
});
