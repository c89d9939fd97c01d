// PUT /user with MAILER_AUTOCONFIRM and SMS_AUTOCONFIRM (REFERENCE §2.8, §7.4): an anonymous user's new
// email and anyone's new phone apply at once; a confirmed user's email change mails both addresses and
// needs either link.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { signIn, signUp, uniqueEmail } from './helpers/accounts.js';
import { pathOf } from './helpers/users.js';

const smtp = await startSmtpServer();
const api = await startTestService({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_SMS_AUTOCONFIRM: 'true',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
});

const put = (token: string, body: unknown) => api.request('PUT', '/user', { token, body });
const anonymous = async () => (await api.request('POST', '/signup', { body: {} })).body;

t.test('anonymous user + email + password: permanent at once, no mail', async (t) => {
  const anon = await anonymous();
  const email = uniqueEmail('auto-anon');
  const mails = smtp.mails.length;
  const res = await put(anon.access_token, { email, password: 'Anon-password-5' });
  t.equal(res.status, 200);
  t.match(res.body, { email, is_anonymous: false });
  t.strictSame(res.body.app_metadata, {}, 'app_metadata left as it was, as the original');
  t.strictSame(res.body.user_metadata, { email_verified: true }, 'a first confirmed email marks email_verified, no address key');
  t.ok(res.body.email_confirmed_at);
  t.notOk('new_email' in res.body);
  t.equal(res.body.identities.length, 1);
  t.equal(smtp.mails.length, mails);
  t.equal((await signIn(api, email, 'Anon-password-5')).user.id, anon.user.id);
});

t.test('anonymous user + email taken at once: the PKCE fields are not read, as nothing is mailed', async (t) => {
  const anon = await anonymous();
  const email = uniqueEmail('auto-anon-pkce');
  const res = await put(anon.access_token, { email, code_challenge: 'x'.repeat(43), code_challenge_method: 'sha1' });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.match(res.body, { email, is_anonymous: false });
  const flows = await api.db.query('select count(*)::int as n from flow_state where user_id = $1', [anon.user.id]);
  t.equal(flows.rows[0].n, 0, 'no flow is made');
});

t.test('anonymous user + phone: permanent at once with the phone provider', async (t) => {
  const anon = await anonymous();
  const res = await put(anon.access_token, { phone: '+14155550133' });
  t.match(res.body, { phone: '14155550133', is_anonymous: false, identities: [{ provider: 'phone' }] });
  t.strictSame([res.body.app_metadata, res.body.user_metadata], [{}, {}], 'both metadata left as they were, as the original');
  const { rows } = await api.db.query('select raw_app_meta_data from users where id = $1', [anon.user.id]);
  t.strictSame(rows, [{ raw_app_meta_data: {} }]);
  t.ok(res.body.phone_confirmed_at);
});

t.test("a confirmed user's phone change applies at once with SMS_AUTOCONFIRM", async (t) => {
  const s = await signUp(api);
  const res = await put(s.access_token, { phone: '+14155550144' });
  t.equal(res.body.phone, '14155550144');
  t.strictSame(res.body.app_metadata, { provider: 'email', providers: ['email'] }, 'app_metadata untouched, as the original');
  t.same(
    res.body.identities.map((i: { provider: string }) => i.provider),
    ['email', 'phone'],
  );
});

const recoveryLink = async (email: string) => {
  const asked = await api.request('POST', '/recover', { body: { email } });
  if (asked.status !== 200) throw new Error(`recover: ${asked.status} ${asked.text}`);
  return (await smtp.waitForMail((m) => m.to === email && /type=recovery/.test(m.link ?? ''))).link!;
};
const userModified = async (id: string) =>
  (
    await api.db.query(
      `select payload->>'actor_username' as actor from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' = 'user_modified' order by created_at`,
      [id],
    )
  ).rows.map((r) => r.actor);

t.test('a phone taken at once voids the earlier links and codes; two user_modified entries, as the original', async (t) => {
  const s = await signUp(api);
  const link = await recoveryLink(s.user.email);
  const res = await put(s.access_token, { phone: '+14155550155' });
  t.equal(res.status, 200);
  const followed = await api.request('GET', pathOf(link));
  t.match(followed.headers.get('location'), /error_code=otp_expired/, 'the recovery link mailed before no longer works');
  t.equal((await api.db.query('select 1 from one_time_tokens where user_id = $1', [s.user.id])).rowCount, 0);
  t.strictSame(
    await userModified(s.user.id),
    [s.user.email, '14155550155'],
    "the address's entry, by the user before it, then the update's",
  );
});

t.test("an anonymous user's email taken at once voids its pending phone code", async (t) => {
  const anon = await anonymous();
  await api.db.query(
    `insert into one_time_tokens (user_id, token_type, token_hash, relates_to) values ($1, 'phone_change_token', 'planted', '14155550166')`,
    [anon.user.id],
  );
  const res = await put(anon.access_token, { email: uniqueEmail('auto-void') });
  t.equal(res.status, 200);
  t.equal((await api.db.query('select 1 from one_time_tokens where user_id = $1', [anon.user.id])).rowCount, 0);
  t.strictSame(await userModified(anon.user.id), ['', res.body.email]);
});

t.test('the email-change links mailed along with a phone taken at once keep working', async (t) => {
  const s = await signUp(api);
  const newEmail = uniqueEmail('auto-both');
  const res = await put(s.access_token, { email: newEmail, phone: '+14155550177' });
  t.match(res.body, { phone: '14155550177', new_email: newEmail });
  const toNew = await smtp.waitForMail(newEmail);
  const done = await api.request('GET', pathOf(toNew.link!));
  t.match(done.headers.get('location'), /#access_token=/);
  t.equal((await signIn(api, newEmail)).user.id, s.user.id);
});

t.test('a phone user confirming a first email gets email_verified in user_metadata and its JWT, as the original', async (t) => {
  const signedUp = await api.request('POST', '/signup', { body: { phone: '+14155550188', password: 'Phone-password-6' } });
  t.equal(signedUp.status, 200, 'phone sign-up');
  t.equal(signedUp.body.user.user_metadata.email_verified, false);
  const email = uniqueEmail('phone-first');
  t.equal((await put(signedUp.body.access_token, { email })).body.new_email, email);
  const done = await api.request('GET', pathOf((await smtp.waitForMail(email)).link!));
  const accessToken = new URLSearchParams(done.headers.get('location')!.split('#')[1]).get('access_token')!;
  const me = await api.request('GET', '/user', { token: accessToken });
  t.match(me.body, { email, user_metadata: { email_verified: true } });
  t.ok(me.body.email_confirmed_at);
  t.notOk('email' in me.body.user_metadata, 'no address key where the sign-up put none');
  const claims = JSON.parse(Buffer.from(accessToken.split('.')[1], 'base64url').toString());
  t.equal(claims.user_metadata.email_verified, true);
  t.strictSame(me.body.app_metadata, { provider: 'phone', providers: ['phone', 'email'] }, '/verify lists the provider');
});

t.test("a confirmed user's email change: mails to both addresses as the original, either link completes it", async (t) => {
  for (const side of ['current', 'new'] as const) {
    const s = await signUp(api);
    const newEmail = uniqueEmail('auto-new');
    const res = await put(s.access_token, { email: newEmail });
    t.equal(res.body.new_email, newEmail);
    const toNew = await smtp.waitForMail(newEmail);
    const toCurrent = await smtp.waitForMail(s.user.email);
    t.equal(toNew.subject, 'Confirm Email Change');
    t.equal(toCurrent.subject, 'Confirm Email Change', 'the current address is asked too, autoconfirm or not');
    const done = await api.request('GET', pathOf((side === 'current' ? toCurrent : toNew).link!));
    t.match(done.headers.get('location'), /#access_token=/, `the ${side} address's link alone completes it`);
    t.equal((await signIn(api, newEmail)).user.id, s.user.id);
  }
});
