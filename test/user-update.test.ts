// PUT /user (REFERENCE §2.8, §7.4): metadata, password, email change (secure, both mails received and
// followed), phone change (SMS received and verified), and the refusals, each checked over HTTP.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startMailStack } from './helpers/passwordless.js';
import { signIn, uniqueEmail, refresh } from './helpers/accounts.js';
import { codeIn, confirmedUser, PASSWORD, pathOf } from './helpers/users.js';
import { behindDeletion } from './helpers/row-lock.js';

const stack = await startMailStack(
  { AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true', AUTH_RATE_LIMIT_EMAIL_SENT: '1000', AUTH_RATE_LIMIT_SMS_SENT: '1000' },
  { sms: true },
);
const { api, smtp } = stack;
const sms = stack.sms!;
t.teardown(() => stack.stop());

const put = (token: string, body: unknown) => api.request('PUT', '/user', { token, body });
const changeMail = (to: string) => smtp.waitForMail((m) => m.to === to && m.subject === 'Confirm Email Change');

t.test('data merges into user_metadata; null deletes a key', async (t) => {
  const s = await confirmedUser(api);
  t.equal((await put(s.access_token, { data: { a: 1, b: { nested: true } } })).status, 200);
  const res = await put(s.access_token, { data: { b: null, c: 'three' } });
  t.equal(res.status, 200);
  t.match(res.body.user_metadata, { a: 1, c: 'three', email: s.user.email });
  t.notOk('b' in res.body.user_metadata);
  const me = await api.request('GET', '/user', { token: s.access_token });
  t.strictSame(me.body.user_metadata, res.body.user_metadata);
});

t.test('concurrent data updates of one user all land (no lost update)', async (t) => {
  const s = await confirmedUser(api);
  const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => put(s.access_token, { data: { [`k${i}`]: i } })));
  t.strictSame([...new Set(replies.map((r) => r.status))], [200]);
  const me = await api.request('GET', '/user', { token: s.access_token });
  for (let i = 0; i < 20; i++) t.equal(me.body.user_metadata[`k${i}`], i);
});

t.test('app_metadata needs admin privileges', async (t) => {
  const s = await confirmedUser(api);
  const res = await put(s.access_token, { app_metadata: { plan: 'gold' } });
  t.strictSame(res.body, { code: 403, error_code: 'not_admin', msg: 'Updating app_metadata requires admin privileges' });
});

t.test('unauthenticated and malformed requests are refused', async (t) => {
  t.equal((await api.request('PUT', '/user', { body: {} })).status, 401);
  const s = await confirmedUser(api);
  const bad = await put(s.access_token, { email: 'not-an-email' });
  t.strictSame(bad.body, { code: 400, error_code: 'validation_failed', msg: 'Unable to validate email address: invalid format' });
  const blank = await put(s.access_token, { email: '   ' });
  t.strictSame(
    blank.body,
    { code: 400, error_code: 'validation_failed', msg: 'Unable to validate email address: invalid format' },
    'white space alone is an address sent, of an invalid format, as in the original',
  );
  const badData = await put(s.access_token, { data: 'x' });
  t.strictSame(badData.body, {
    code: 400,
    error_code: 'bad_json',
    msg: 'Could not parse request body as JSON: json: cannot unmarshal string into Go struct field UserUpdateParams.data of type map[string]interface {}',
  });
});

t.test('password change: policy, same password, then other sessions end and the new password works', async (t) => {
  const s = await confirmedUser(api);
  const other = await signIn(api, s.user.email);
  const long = await put(s.access_token, { password: 'A1-'.repeat(25) });
  t.strictSame(long.body, { code: 400, error_code: 'validation_failed', msg: 'Password cannot be longer than 72 characters' });
  const weak = await put(s.access_token, { password: 'abc' });
  t.equal(weak.status, 422);
  t.equal(weak.body.error_code, 'weak_password');
  const same = await put(s.access_token, { password: PASSWORD });
  t.strictSame(same.body, { code: 422, error_code: 'same_password', msg: 'New password should be different from the old password.' });
  const ok = await put(s.access_token, { password: 'Another-password-2' });
  t.equal(ok.status, 200);
  t.equal(ok.body.id, s.user.id);
  t.equal((await api.request('GET', '/user', { token: other.access_token })).body.error_code, 'session_not_found', 'other session ended');
  t.equal((await refresh(api, other.refresh_token)).body.error_code, 'refresh_token_not_found');
  t.equal((await api.request('GET', '/user', { token: s.access_token })).status, 200, 'current session kept');
  const old = await api.request('POST', '/token?grant_type=password', { body: { email: s.user.email, password: PASSWORD } });
  t.equal(old.body.error_code, 'invalid_credentials');
  t.equal(
    (await api.request('POST', '/token?grant_type=password', { body: { email: s.user.email, password: 'Another-password-2' } })).status,
    200,
  );
});

t.test('two sessions changing the password at once: the first change ends the other session, whose change is refused', async (t) => {
  const s = await confirmedUser(api);
  const other = await signIn(api, s.user.email);
  const [mine, theirs] = await Promise.all([
    put(s.access_token, { password: 'Mine-password-1' }),
    put(other.access_token, { password: 'Theirs-password-2' }),
  ]);
  // Whichever wrote first ended the other's session; the other, which waited for the user's row, is
  // answered as if sent after it, instead of setting its password and ending the winner's session.
  const statuses = [mine.status, theirs.status].sort();
  t.strictSame(statuses, [200, 403], `${mine.body.error_code ?? mine.status}, ${theirs.body.error_code ?? theirs.status}`);
  const [winner, loser, password] = mine.status === 200 ? [s, theirs, 'Mine-password-1'] : [other, mine, 'Theirs-password-2'];
  t.equal(loser.body.error_code, 'session_not_found');
  t.equal((await api.request('GET', '/user', { token: winner.access_token })).status, 200, "the winner's session is kept");
  const signedIn = await api.request('POST', '/token?grant_type=password', { body: { email: s.user.email, password } });
  t.equal(signedIn.status, 200, "the winner's password is the one kept");
});

t.test('secure email change: mails to both addresses, both links needed', async (t) => {
  const s = await confirmedUser(api);
  const newEmail = uniqueEmail('new');
  const res = await put(s.access_token, { email: newEmail.toUpperCase() });
  t.equal(res.status, 200);
  t.equal(res.body.email, s.user.email, 'unchanged until confirmed');
  t.equal(res.body.new_email, newEmail);
  t.ok(Date.parse(res.body.email_change_sent_at));
  const toNew = await changeMail(newEmail);
  const toCurrent = await changeMail(s.user.email);
  for (const mail of [toNew, toCurrent]) {
    t.match(mail.link, /\/verify\?token=[0-9a-f]{56}&type=email_change&redirect_to=/);
    t.match(mail.text, `from ${s.user.email} to ${newEmail}`);
  }
  const first = await api.request('GET', pathOf(toNew.link!));
  t.equal(first.status, 303);
  t.equal(
    first.headers.get('location'),
    'http://localhost:3000#message=Confirmation+link+accepted.+Please+proceed+to+confirm+link+sent+to+the+other+email&sb=',
  );
  t.equal((await api.request('GET', '/user', { token: s.access_token })).body.email, s.user.email, 'one half is not enough');
  const again = await api.request('GET', pathOf(toNew.link!));
  t.match(again.headers.get('location'), /error_code=otp_expired/, 'a link works once');
  const second = await api.request('GET', pathOf(toCurrent.link!));
  t.equal(second.status, 303);
  const fragment = new URLSearchParams(second.headers.get('location')!.split('#')[1]);
  t.equal(fragment.get('type'), 'email_change');
  const me = await api.request('GET', '/user', { token: fragment.get('access_token')! });
  t.equal(me.body.email, newEmail);
  t.notOk('new_email' in me.body);
  t.equal(me.body.identities[0].identity_data.email, newEmail);
  t.equal((await signIn(api, newEmail)).user.id, s.user.id, 'signs in with the new address');
});

t.test("secure email change: one link never completes it, even once wrong codes spent the other half's token", async (t) => {
  const s = await confirmedUser(api);
  const newEmail = uniqueEmail('onehalf');
  t.equal((await put(s.access_token, { email: newEmail })).status, 200);
  const toNew = await changeMail(newEmail);
  await changeMail(s.user.email);
  // Whoever asked for the change (a stolen session) guesses codes for the current address until its token is spent.
  for (let i = 0; i < 5; i++) {
    const wrong = await api.request('POST', '/verify', { body: { type: 'email_change', email: s.user.email, token: '000000' } });
    t.equal(wrong.status, 403);
  }
  const currentHalf = await api.db.query("select 1 from one_time_tokens where user_id = $1 and token_type = 'email_change_token_current'", [
    s.user.id,
  ]);
  t.equal(currentHalf.rowCount, 0, "the current address's token is gone");
  const followed = await api.request('GET', pathOf(toNew.link!));
  t.equal(
    followed.headers.get('location'),
    'http://localhost:3000#message=Confirmation+link+accepted.+Please+proceed+to+confirm+link+sent+to+the+other+email&sb=',
    'the first of two, as ever',
  );
  const row = (await api.db.query('select email, email_change_confirm_status from users where id = $1', [s.user.id])).rows[0];
  t.strictSame(row, { email: s.user.email, email_change_confirm_status: 1 }, 'the address did not move');
});

t.test('an address taken before the last link is followed: a 422 in the fragment, without an OAuth error name', async (t) => {
  const s = await confirmedUser(api);
  const newEmail = uniqueEmail('taken');
  t.equal((await put(s.access_token, { email: newEmail })).status, 200);
  const toNew = await changeMail(newEmail);
  const toCurrent = await changeMail(s.user.email);
  await api.request('GET', pathOf(toNew.link!));
  await api.db.query(`insert into users (aud, role, email, email_confirmed_at) values ('authenticated', 'authenticated', $1, now())`, [
    newEmail,
  ]);
  const refused = await api.request('GET', pathOf(toCurrent.link!));
  // The original names only 400, 401, 403, 500 and 503 errors (invalid_request, ...); a 422 goes without one.
  t.equal(
    refused.headers.get('location'),
    'http://localhost:3000#error_code=email_exists&error_description=A+user+with+this+email+address+has+already+been+registered&sb=',
  );
});

t.test('a secure email change counts once against RATE_LIMIT_EMAIL_SENT, its two mails together, as the original', async (t) => {
  const s = await confirmedUser(api);
  const sent = async () => Number((await api.db.query("select count from rate_limits where key = 'email_sent'")).rows[0]?.count ?? 0);
  const before = await sent();
  const newEmail = uniqueEmail('counted');
  t.equal((await put(s.access_token, { email: newEmail })).status, 200);
  await changeMail(newEmail);
  await changeMail(s.user.email);
  t.equal((await sent()) - before, 1, 'one permit for two mails');
});

t.test('email change by code through POST /verify, current address first', async (t) => {
  const s = await confirmedUser(api);
  const newEmail = uniqueEmail('code');
  t.equal((await put(s.access_token, { email: newEmail })).status, 200);
  const toNew = await changeMail(newEmail);
  const toCurrent = await changeMail(s.user.email);
  const first = await api.request('POST', '/verify', {
    body: { type: 'email_change', email: s.user.email, token: codeIn(toCurrent.text) },
  });
  t.strictSame(first.body, { msg: 'Confirmation link accepted. Please proceed to confirm link sent to the other email', code: '200' });
  const second = await api.request('POST', '/verify', { body: { type: 'email_change', email: newEmail, token: codeIn(toNew.text) } });
  t.equal(second.status, 200);
  t.equal(second.body.user.email, newEmail);
  t.ok(second.body.refresh_token);
});

t.test('email change with PKCE: pkce_ links, the second one gives an auth code exchanged for a session', async (t) => {
  const s = await confirmedUser(api);
  const newEmail = uniqueEmail('pkce');
  const verifier = 'v'.repeat(50);
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const res = await put(s.access_token, { email: newEmail, code_challenge: challenge, code_challenge_method: 'S256' });
  t.equal(res.status, 200);
  const flow = await api.db.query(
    'select code_challenge, code_challenge_method, authentication_method from flow_state where user_id = $1',
    [s.user.id],
  );
  t.strictSame(flow.rows, [{ code_challenge: challenge, code_challenge_method: 's256', authentication_method: 'email_change' }]);
  const toNew = await changeMail(newEmail);
  const toCurrent = await changeMail(s.user.email);
  for (const mail of [toNew, toCurrent]) t.match(mail.link, /token=pkce_[0-9a-f]{56}&type=email_change/);
  const first = await api.request('GET', pathOf(toNew.link!));
  t.match(first.headers.get('location'), /message=Confirmation\+link\+accepted/);
  const second = await api.request('GET', pathOf(toCurrent.link!));
  const code = new URL(second.headers.get('location')!).searchParams.get('code');
  t.match(code, /^[0-9a-f-]{36}$/);
  const exchanged = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: code, code_verifier: verifier } });
  t.equal(exchanged.status, 200);
  t.equal(exchanged.body.user.email, newEmail);
});

t.test('PUT /user reads PKCE fields as the original: only for an email change, the challenge stored as given', async (t) => {
  const s = await confirmedUser(api);
  const flows = async (userId = s.user.id) =>
    (await api.db.query('select code_challenge, code_challenge_method from flow_state where user_id = $1', [userId])).rows;
  const metadata = await put(s.access_token, { data: { nick: 'pk' }, code_challenge: 'short', code_challenge_method: 'nonsense' });
  t.equal(metadata.status, 200, 'without an email change they are not read');
  t.equal(metadata.body.user_metadata.nick, 'pk');
  const lone = await put(s.access_token, { email: uniqueEmail('pkce-lone'), code_challenge_method: 's256' });
  t.equal(lone.status, 200, 'a method without a challenge: the implicit flow');
  t.strictSame(await flows(), [], 'and no flow state');
  // Another user: the first change's mail started this one's send interval.
  const other = await confirmedUser(api);
  const short = await put(other.access_token, { email: uniqueEmail('pkce-short'), code_challenge: 'short', code_challenge_method: 'S256' });
  t.equal(short.status, 200, short.text);
  t.strictSame(
    await flows(other.user.id),
    [{ code_challenge: 'short', code_challenge_method: 's256' }],
    'a short challenge is stored as given',
  );
  const unknown = await put(s.access_token, {
    email: uniqueEmail('pkce-bad'),
    code_challenge: 'c'.repeat(43),
    code_challenge_method: 'sha1',
  });
  t.strictSame(unknown.body, { code: 400, error_code: 'validation_failed', msg: 'Invalid code_challenge_method' });
  // A type the original cannot decode fails the whole body, in Go's words, and nothing of it is applied.
  const typed = await put(s.access_token, { data: { nick: 'typed' }, code_challenge: 42 });
  t.strictSame(typed.body, {
    code: 400,
    error_code: 'bad_json',
    msg: 'Could not parse request body as JSON: json: cannot unmarshal number into Go struct field UserUpdateParams.code_challenge of type string',
  });
  t.equal((await api.db.query("select raw_user_meta_data ->> 'nick' as nick from users where id = $1", [s.user.id])).rows[0].nick, 'pk');
});

t.test('an address another user holds is refused', async (t) => {
  const a = await confirmedUser(api);
  const b = await confirmedUser(api);
  const res = await put(a.access_token, { email: b.user.email });
  t.strictSame(res.body, { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' });
});

t.test("an address that is another user's identity email is refused, as the original", async (t) => {
  const a = await confirmedUser(api);
  const b = await confirmedUser(api);
  const held = uniqueEmail('held');
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1, $2, $3, 'github')`, [
    `gh-${b.user.id}`,
    b.user.id,
    { sub: `gh-${b.user.id}`, email: held },
  ]);
  const res = await put(a.access_token, { email: held.toUpperCase() });
  t.strictSame(res.body, { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' });
  // The holder itself may take it as its own address.
  t.equal((await put(b.access_token, { email: held })).status, 200);
});

t.test(
  "refusals in the original's order: the password's policy before a taken address; an SSO user's own address is no change",
  async (t) => {
    const a = await confirmedUser(api);
    const b = await confirmedUser(api);
    const weak = await put(a.access_token, { email: b.user.email, password: 'abc' });
    t.equal(weak.body.error_code, 'weak_password');
    await api.db.query('update users set is_sso_user = true where id = $1', [a.user.id]);
    const own = await put(a.access_token, { email: a.user.email.toUpperCase(), data: { sso: true } });
    t.equal(own.status, 200, own.text);
    t.equal(own.body.user_metadata.sso, true);
    const other = await put(a.access_token, { email: uniqueEmail('sso-other') });
    t.equal(other.body.error_code, 'user_sso_managed');
  },
);

t.test('a user deleted while the update waits for its row: 403 user_not_found and no mail, not a 500', async (t) => {
  for (const soft of [false, true]) {
    const s = await confirmedUser(api);
    const newEmail = uniqueEmail('after-deletion');
    const mailed = smtp.mails.length;
    const res = await behindDeletion(api, s.user.id, soft, () => put(s.access_token, { email: newEmail }));
    t.strictSame(
      [res.status, res.body],
      [403, { code: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' }],
      soft ? 'soft-deleted' : 'deleted',
    );
    t.equal(smtp.mails.length, mailed, 'no mail');
  }
});

t.test('email change frequency: a second request within the interval is refused', async (t) => {
  const s = await confirmedUser(api);
  t.equal((await put(s.access_token, { email: uniqueEmail('first') })).status, 200);
  const res = await put(s.access_token, { email: uniqueEmail('second') });
  t.equal(res.status, 429);
  t.equal(res.body.error_code, 'over_email_send_rate_limit');
});

t.test('phone change: SMS code to the new number, verified with POST /verify phone_change', async (t) => {
  const s = await confirmedUser(api);
  const res = await put(s.access_token, { phone: '+1 415 555 0101' });
  t.equal(res.status, 200);
  t.equal(res.body.new_phone, '14155550101');
  t.equal(res.body.phone, '');
  t.ok(Date.parse(res.body.phone_change_sent_at));
  const message = await sms.waitForMessage('14155550101');
  const wrong = await api.request('POST', '/verify', {
    body: { type: 'phone_change', phone: '+14155550101', token: '000000' === codeIn(message.body) ? '111111' : '000000' },
  });
  t.strictSame(wrong.body, { code: 403, error_code: 'otp_expired', msg: 'Token has expired or is invalid' });
  const ok = await api.request('POST', '/verify', { body: { type: 'phone_change', phone: '+14155550101', token: codeIn(message.body) } });
  t.equal(ok.status, 200);
  t.equal(ok.body.user.phone, '14155550101');
  t.ok(ok.body.user.phone_confirmed_at);
  t.notOk('new_phone' in ok.body.user);
  t.ok(ok.body.user.identities.some((i: any) => i.provider === 'phone'));
});

t.test('anonymous user: password alone is refused; email + password becomes permanent once verified', async (t) => {
  const anon = (await api.request('POST', '/signup', { body: {} })).body;
  t.equal(anon.user.is_anonymous, true);
  const alone = await put(anon.access_token, { password: 'Anon-password-3' });
  t.strictSame(alone.body, {
    code: 422,
    error_code: 'validation_failed',
    msg: 'Updating password of an anonymous user without an email or phone is not allowed',
  });
  const email = uniqueEmail('anon');
  const res = await put(anon.access_token, { email, password: 'Anon-password-3' });
  t.equal(res.status, 200);
  t.equal(res.body.is_anonymous, true, 'still anonymous until verified');
  t.equal(res.body.new_email, email);
  const mail = await changeMail(email);
  t.equal(smtp.mails.filter((m) => m.subject === 'Confirm Email Change' && m.to === '').length, 0, 'no mail to a missing current address');
  t.match(mail.text, `changing your email address to ${email}`, 'no current address to name: {{ .Email }} is empty, as the original');
  const done = await api.request('GET', pathOf(mail.link!));
  const fragment = new URLSearchParams(done.headers.get('location')!.split('#')[1]);
  const me = await api.request('GET', '/user', { token: fragment.get('access_token')! });
  t.match(me.body, { email, is_anonymous: false, app_metadata: { provider: 'email', providers: ['email'] } });
  t.ok(me.body.email_confirmed_at);
  t.equal((await signIn(api, email, 'Anon-password-3')).user.id, anon.user.id);
});

t.test("a recovery link's session sets a new password", async (t) => {
  const s = await confirmedUser(api);
  t.equal((await api.request('POST', '/recover', { body: { email: s.user.email } })).status, 200);
  const mail = await smtp.waitForMail((m) => m.to === s.user.email && /type=recovery/.test(m.link ?? ''));
  const followed = await api.request('GET', pathOf(mail.link!));
  const fragment = new URLSearchParams(followed.headers.get('location')!.split('#')[1]);
  t.equal(fragment.get('type'), 'recovery');
  const res = await put(fragment.get('access_token')!, { password: 'Recovered-password-4' });
  t.equal(res.status, 200);
  t.equal((await signIn(api, s.user.email, 'Recovered-password-4')).user.id, s.user.id);
});
