// POST /magiclink (REFERENCE §2.5) over a real SMTP server: confirmed users get a magic link that signs
// them in; unknown and unconfirmed addresses are signed up and get the confirmation mail instead.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startMailStack, linkOf, codeOf, fragmentOf, insertUser } from './helpers/passwordless.js';
import { behindDeletion } from './helpers/row-lock.js';

const stack = await startMailStack();
const { api, smtp } = stack;
t.teardown(() => stack.stop());

async function confirmedUser(email: string): Promise<void> {
  await api.request('POST', '/signup', { body: { email, password: 'secret-password' } });
  await api.db.query('update users set email_confirmed_at = now(), confirmation_sent_at = null where email = $1', [email]);
  await smtp.waitForMail(email);
}

t.test('a confirmed user gets a magic link that signs in and redirects with type=magiclink', async (t) => {
  await confirmedUser('mia@example.com');
  const res = await api.request('POST', '/magiclink?redirect_to=http://localhost:3000/welcome', { body: { email: 'Mia@Example.com' } });
  t.equal(res.status, 200);
  t.strictSame(res.body, {});
  const mail = await smtp.waitForMail('mia@example.com');
  t.equal(mail.subject, 'Your Magic Link');
  const link = linkOf(mail);
  t.equal(link.type, 'magiclink');
  t.equal(link.redirectTo, 'http://localhost:3000/welcome');
  t.match(link.token, /^[0-9a-f]{56}$/);
  const {
    rows: [user],
  } = await api.db.query('select recovery_sent_at from users where email = $1', ['mia@example.com']);
  t.ok(user.recovery_sent_at, 'recovery_sent_at records the send');

  const followed = await api.request('GET', link.path);
  t.equal(followed.status, 303);
  const location = followed.headers.get('location')!;
  t.ok(location.startsWith('http://localhost:3000/welcome#'));
  const fragment = fragmentOf(location);
  t.strictSame(Object.keys(fragment), ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'sb', 'token_type', 'type']);
  t.equal(fragment.type, 'magiclink');
  const me = await api.request('GET', '/user', { token: fragment.access_token });
  t.equal(me.body.email, 'mia@example.com');
});

t.test('the magic link mail also carries a code for POST /verify type=magiclink', async (t) => {
  await api.db.query("update users set recovery_sent_at = now() - interval '1 hour' where email = $1", ['mia@example.com']);
  await api.request('POST', '/magiclink', { body: { email: 'mia@example.com' } });
  const code = codeOf(await smtp.waitForMail('mia@example.com'));
  const res = await api.request('POST', '/verify', { body: { type: 'magiclink', email: 'mia@example.com', token: code } });
  t.equal(res.status, 200);
  t.equal(res.body.user.email, 'mia@example.com');
  t.ok(res.body.access_token && res.body.refresh_token);
});

t.test('a link cannot be computed from a guessed code: the link token is keyed, and guesses by link are refused', async (t) => {
  await confirmedUser('guess@example.com');
  await api.request('POST', '/magiclink', { body: { email: 'guess@example.com' } });
  const mail = await smtp.waitForMail('guess@example.com');
  const code = codeOf(mail);
  const link = linkOf(mail);
  // A link names no account, so a wrong one cannot be counted against one (SECURITY_OTP_MAX_ATTEMPTS): were the
  // link the original's unkeyed SHA-224(address + code), trying the 10^6 codes by link would sign in.
  const unkeyed = createHash('sha224').update(`guess@example.com${code}`).digest('hex');
  t.not(link.token, unkeyed, 'the mailed link is not the unkeyed hash of its code');
  const guessed = await api.request('POST', '/verify', { body: { type: 'magiclink', token_hash: unkeyed } });
  t.strictSame(
    [guessed.status, guessed.body.error_code],
    [403, 'otp_expired'],
    'the link a guesser computes from the right code is refused',
  );
  const followed = await api.request('POST', '/verify', { body: { type: 'magiclink', token_hash: link.token } });
  t.equal(followed.status, 200, 'the mailed link still signs in');
});

t.test('a second magic link within the interval is 429 and sends nothing', async (t) => {
  await api.db.query("update users set recovery_sent_at = now() - interval '1 hour' where email = $1", ['mia@example.com']);
  t.equal((await api.request('POST', '/magiclink', { body: { email: 'mia@example.com' } })).status, 200);
  await smtp.waitForMail('mia@example.com');
  const again = await api.request('POST', '/magiclink', { body: { email: 'mia@example.com' } });
  t.equal(again.status, 429);
  t.equal(again.body.error_code, 'over_email_send_rate_limit');
  // SMTP_MAX_FREQUENCY defaults to 900 s, which is above the 60 s floor.
  t.match(again.body.msg, /^For security purposes, you can only request this after (89\d|900) seconds\.$/);
  const sent = smtp.mails.filter((m) => m.to === 'mia@example.com').length;
  t.equal(sent, 4, 'no mail for the refused request');
});

t.test('an unknown address is signed up with user_metadata from data and gets the confirmation mail', async (t) => {
  const res = await api.request('POST', '/magiclink', { body: { email: 'new@example.com', data: { plan: 'pro' } } });
  t.equal(res.status, 200);
  t.strictSame(res.body, {});
  const mail = await smtp.waitForMail('new@example.com');
  t.equal(mail.subject, 'Confirm Your Signup');
  const {
    rows: [user],
  } = await api.db.query('select * from users where email = $1', ['new@example.com']);
  t.equal(user.encrypted_password, null, 'no password: nothing was hashed, so an unknown address costs what a known one does');
  t.equal(user.email_confirmed_at, null);
  t.equal(user.raw_user_meta_data.plan, 'pro');
  const followed = await api.request('GET', linkOf(mail).path);
  const fragment = fragmentOf(followed.headers.get('location'));
  t.equal(fragment.type, 'signup');
  const me = await api.request('GET', '/user', { token: fragment.access_token });
  t.ok(me.body.email_confirmed_at, 'following the link confirmed the address');
});

t.test('a later null data empties it, as the original decodes data into a map: the address is signed up without it', async (t) => {
  const res = await api.request('POST', '/magiclink', { body: { email: 'nulled-data@example.com', data: { plan: 'pro' }, Data: null } });
  t.equal(res.status, 200, res.text);
  await smtp.waitForMail('nulled-data@example.com');
  const {
    rows: [user],
  } = await api.db.query('select raw_user_meta_data from users where email = $1', ['nulled-data@example.com']);
  t.notOk('plan' in user.raw_user_meta_data, 'no metadata from the nulled data');
});

t.test('an unconfirmed user gets the confirmation mail again, not a magic link', async (t) => {
  await api.request('POST', '/signup', { body: { email: 'pending@example.com', password: 'secret-password' } });
  await smtp.waitForMail('pending@example.com');
  await api.db.query("update users set confirmation_sent_at = now() - interval '1 hour' where email = $1", ['pending@example.com']);
  t.equal((await api.request('POST', '/magiclink', { body: { email: 'pending@example.com' } })).status, 200);
  t.equal((await smtp.waitForMail('pending@example.com')).subject, 'Confirm Your Signup');
});

t.test('validation errors', async (t) => {
  const empty = await api.request('POST', '/magiclink', { body: {} });
  t.equal(empty.status, 422);
  t.strictSame(empty.body, { code: 422, error_code: 'validation_failed', msg: 'Password recovery requires an email' });
  const bad = await api.request('POST', '/magiclink', { body: { email: 'not-an-email' } });
  t.equal(bad.status, 400);
  t.strictSame(bad.body, { code: 400, error_code: 'validation_failed', msg: 'Unable to validate email address: invalid format' });
  const pkce = await api.request('POST', '/magiclink', {
    body: { email: 'x@example.com', code_challenge: 'short', code_challenge_method: 's256' },
  });
  t.strictSame(pkce.body, { code: 400, error_code: 'validation_failed', msg: 'code challenge has to be between 43 and 128 characters' });
  const { rows } = await api.db.query('select 1 from users where email = $1', ['x@example.com']);
  t.equal(rows.length, 0, 'a refused request signs nobody up');
});

t.test('a user deleted while its magic link waits for it: the address is signed up, as an unknown one is', async (t) => {
  for (const soft of [false, true]) {
    const email = `deleted-meanwhile-${soft ? 'soft' : 'hard'}@example.com`;
    const id = await insertUser(api.db, { email, confirmed: true });
    // /magiclink finds the user, then waits for its row (held here) while an admin deletes the user.
    const res = await behindDeletion(api, id, soft, () => api.request('POST', '/magiclink', { body: { email } }));
    t.strictSame([res.status, res.body], [200, {}], soft ? 'soft-deleted' : 'deleted');
    const mail = await smtp.waitForMail(email);
    t.equal(mail.subject, 'Confirm Your Signup', 'the confirmation an unknown address gets');
    const users = await api.db.query('select id, email_confirmed_at from users where email = $1', [email]);
    t.equal(users.rowCount, 1, 'one new user holds the address');
    t.not(users.rows[0].id, id);
    t.equal(users.rows[0].email_confirmed_at, null);
  }
});
