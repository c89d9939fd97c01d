// Phone factors through the SMS gateway fakes (their real wire formats): the code goes out at each
// challenge with MFA_PHONE_TEMPLATE, counts against the send limits, and verifies the session to aal2.
import t from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { startSmsGatewayFake, twilioEnv, twilioVerifyEnv, type SmsGatewayFake } from './helpers/sms.js';
import { signUp } from './helpers/accounts.js';
import { claimsOf, verify } from './helpers/mfa.js';
import { afterSessionEnded, behindDeletion } from './helpers/row-lock.js';

let sms: SmsGatewayFake;
let api: TestService;

const phoneOn = { AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_MFA_PHONE_ENROLL_ENABLED: 'true', AUTH_MFA_PHONE_VERIFY_ENABLED: 'true' };

t.before(async () => {
  sms = await startSmsGatewayFake();
  api = await startTestService({
    ...phoneOn,
    ...twilioEnv(sms.baseUrl),
    AUTH_MFA_PHONE_TEMPLATE: 'Your sign-in code is {{ .Code }}',
    AUTH_MFA_PHONE_OTP_LENGTH: '8',
    AUTH_RATE_LIMIT_SMS_SENT: '1000',
  });
});
t.teardown(async () => {
  await api.stop();
  await sms.close();
});

const errorOf = (res: { status: number; body: any }) => ({ status: res.status, error_code: res.body?.error_code, msg: res.body?.msg });
let nextNumber = 14155550100;
const number = () => String(nextNumber++);
const codeOf = (body: string) => /code is (\d+)$/.exec(body)![1];

async function enrollPhone(target: TestService, token: string, phone: string, friendlyName?: string) {
  return target.request('POST', '/factors', { token, body: { factor_type: 'phone', phone: `+${phone}`, friendly_name: friendlyName } });
}

t.test('enrolling a phone factor: the number is required and must be E.164', async (t) => {
  const s = await signUp(api);
  const none = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'phone' } });
  t.same(errorOf(none), { status: 400, error_code: 'validation_failed', msg: 'Phone number required to enroll Phone factor' });
  const bad = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'phone', phone: '12' } });
  t.same(errorOf(bad), { status: 400, error_code: 'validation_failed', msg: 'Invalid phone number format (E.164 required)' });
  const phone = number();
  const ok = await enrollPhone(api, s.access_token, phone, 'mobile');
  t.equal(ok.status, 200);
  t.same(Object.keys(ok.body).sort(), ['friendly_name', 'id', 'phone', 'type']);
  t.match(ok.body, { type: 'phone', friendly_name: 'mobile', phone: `+${phone}` });
  const user = await api.request('GET', '/user', { token: s.access_token });
  t.match(user.body.factors[0], { factor_type: 'phone', phone, status: 'unverified' });
});

t.test('challenge sends the code by SMS with the MFA template; the code verifies the session to aal2', async (t) => {
  const s = await signUp(api);
  const phone = number();
  const factor = (await enrollPhone(api, s.access_token, phone)).body;
  const c = await api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} });
  t.equal(c.status, 200);
  t.equal(c.body.type, 'phone');
  const message = await sms.waitForMessage(phone);
  t.equal(message.channel, 'sms');
  t.match(message.body, /^Your sign-in code is \d{8}$/);
  const code = codeOf(message.body);
  const { rows } = await api.db.query('select otp_code from mfa_challenges where id = $1', [c.body.id]);
  t.notOk(rows[0].otp_code.includes(code), 'the code is sealed at rest');
  const stamped = (await api.db.query('select last_challenged_at = updated_at as same from mfa_factors where id = $1', [factor.id]))
    .rows[0];
  t.equal(stamped.same, true, "the challenge touches the factor's updated_at, as the original's update does");
  const wrong = await verify(api, s.access_token, factor.id, c.body.id, code === '00000000' ? '11111111' : '00000000');
  t.same(errorOf(wrong), { status: 422, error_code: 'mfa_verification_failed', msg: 'Invalid MFA Phone code entered' });
  const v = await verify(api, s.access_token, factor.id, c.body.id, code);
  t.equal(v.status, 200);
  t.equal(claimsOf(v.body.access_token).aal, 'aal2');
  t.equal(claimsOf(v.body.access_token).amr[0].method, 'mfa/phone');
  t.equal(v.body.user.factors[0].status, 'verified');
  t.ok(v.body.user.factors[0].last_challenged_at);
});

t.test('WhatsApp on request; an unknown channel is refused', async (t) => {
  const s = await signUp(api);
  const phone = number();
  const factor = (await enrollPhone(api, s.access_token, phone)).body;
  const bad = await api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: { channel: 'pigeon' } });
  t.equal(bad.status, 400);
  t.equal(bad.body.error_code, 'validation_failed');
  const c = await api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: { channel: 'whatsapp' } });
  t.equal(c.status, 200);
  t.equal((await sms.waitForMessage(phone)).channel, 'whatsapp');
});

t.test('a second challenge within MFA_PHONE_MAX_FREQUENCY is 429 and sends nothing', async (t) => {
  const s = await signUp(api);
  const phone = number();
  const factor = (await enrollPhone(api, s.access_token, phone)).body;
  t.equal((await api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} })).status, 200);
  await sms.waitForMessage(phone);
  const sent = sms.messages.length;
  const again = await api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} });
  t.equal(again.status, 429);
  t.equal(again.body.error_code, 'over_sms_send_rate_limit');
  t.match(again.body.msg, /^For security purposes, you can only request this after \d+ seconds\.$/);
  t.equal(sms.messages.length, sent);
});

t.test('a gateway refusal is 422 sms_send_failed and leaves no challenge behind', async (t) => {
  const s = await signUp(api);
  const phone = number();
  const factor = (await enrollPhone(api, s.access_token, phone)).body;
  sms.failNext('twilio');
  const c = await api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} });
  t.equal(c.status, 422);
  t.equal(c.body.error_code, 'sms_send_failed');
  t.equal((await api.db.query('select 1 from mfa_challenges where factor_id = $1', [factor.id])).rowCount, 0);
  const { rows } = await api.db.query('select last_challenged_at from mfa_factors where id = $1', [factor.id]);
  t.equal(rows[0].last_challenged_at, null, 'the send interval is not started by a failed send');
});

t.test('a session ended while a challenge waits for the user: 403 session_not_found, no challenge, no SMS', async (t) => {
  const s = await signUp(api);
  const phone = number();
  const factor = (await enrollPhone(api, s.access_token, phone)).body;
  // The test holds the user's row and the factor's: the challenge waits at whichever it takes first.
  const reply = await afterSessionEnded(
    api,
    s.user.id,
    s.access_token,
    () => api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} }),
    { table: 'mfa_factors', id: factor.id },
  );
  t.same(errorOf(reply), { status: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' });
  t.equal((await api.db.query('select 1 from mfa_challenges where factor_id = $1', [factor.id])).rowCount, 0, 'no challenge');
  const { rows } = await api.db.query('select last_challenged_at from mfa_factors where id = $1', [factor.id]);
  t.equal(rows[0].last_challenged_at, null, 'the send interval is not started');
  const audited = await api.db.query(
    `select 1 from audit_log_entries where payload->>'action' = 'challenge_created' and payload->'traits'->>'factor_id' = $1::text`,
    [factor.id],
  );
  t.equal(audited.rowCount, 0, 'nothing audited');
  t.equal(sms.messages.filter((m) => m.to === phone).length, 0, 'no SMS');
});

t.test("a challenge beside its user's deletion: 403 user_not_found, not a deadlock 500, no SMS", async (t) => {
  for (const soft of [false, true]) {
    const label = soft ? 'soft-deleted' : 'deleted';
    const s = await signUp(api);
    const phone = number();
    const factor = (await enrollPhone(api, s.access_token, phone)).body;
    // The challenge found the user and its factor, then waits for the user's row behind the deletion.
    const reply = await behindDeletion(api, s.user.id, soft, () =>
      api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} }),
    );
    t.same(errorOf(reply), { status: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' }, label);
    t.equal(sms.messages.filter((m) => m.to === phone).length, 0, `${label}: no SMS`);
  }
});

t.test('one verified factor per number: re-enrolling it is refused, unverified ones are replaced', async (t) => {
  const s = await signUp(api);
  const phone = number();
  const first = (await enrollPhone(api, s.access_token, phone, 'a')).body;
  const second = (await enrollPhone(api, s.access_token, phone, 'b')).body;
  const ids = (await api.db.query('select id from mfa_factors where user_id = $1', [s.user.id])).rows.map((r) => r.id);
  t.same(ids, [second.id], 'the unverified factor for the number was replaced');
  t.not(first.id, second.id);
  const c = await api.request('POST', `/factors/${second.id}/challenge`, { token: s.access_token, body: {} });
  const v = await verify(api, s.access_token, second.id, c.body.id, codeOf((await sms.waitForMessage(phone)).body));
  t.equal(v.status, 200);
  const again = await enrollPhone(api, v.body.access_token, phone, 'c');
  t.same(errorOf(again), {
    status: 422,
    error_code: 'mfa_verified_factor_exists',
    msg: 'A verified phone factor already exists, unenroll the existing factor to continue',
  });
});

t.test('phone factors are off by default; RATE_LIMIT_SMS_SENT does not count MFA codes, as the original', async (t) => {
  const off = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', ...twilioEnv(sms.baseUrl) });
  t.teardown(() => off.stop());
  const u = await signUp(off);
  t.same(errorOf(await enrollPhone(off, u.access_token, number())), {
    status: 422,
    error_code: 'mfa_phone_enroll_not_enabled',
    msg: 'MFA enroll is disabled for Phone',
  });
  const limited = await startTestService({
    ...phoneOn,
    ...twilioEnv(sms.baseUrl),
    AUTH_EXTERNAL_PHONE_ENABLED: 'true',
    AUTH_RATE_LIMIT_SMS_SENT: '1',
  });
  t.teardown(() => limited.stop());
  // The hour's one SMS goes to a sign-in code; the next sign-in code is refused.
  t.equal((await limited.request('POST', '/otp', { body: { phone: number() } })).status, 200);
  const spent = await limited.request('POST', '/otp', { body: { phone: number() } });
  t.same(errorOf(spent), { status: 429, error_code: 'over_sms_send_rate_limit', msg: 'SMS rate limit exceeded' });
  // MFA codes still go out, so users can finish signing in.
  const s = await signUp(limited);
  const phone = number();
  const a = (await enrollPhone(limited, s.access_token, phone, 'a')).body;
  const b = (await enrollPhone(limited, s.access_token, number(), 'b')).body;
  const first = await limited.request('POST', `/factors/${a.id}/challenge`, { token: s.access_token, body: {} });
  t.equal(first.status, 200);
  t.equal((await limited.request('POST', `/factors/${b.id}/challenge`, { token: s.access_token, body: {} })).status, 200);
  const v = await verify(limited, s.access_token, a.id, first.body.id, codeOf((await sms.waitForMessage(phone)).body));
  t.equal(v.status, 200);
  t.equal(claimsOf(v.body.access_token).aal, 'aal2');
});

t.test('with Twilio Verify the gateway makes and checks the code', async (t) => {
  const tv = await startTestService({
    ...phoneOn,
    ...twilioVerifyEnv(sms.baseUrl),
    AUTH_RATE_LIMIT_SMS_SENT: '1000',
  });
  t.teardown(() => tv.stop());
  const s = await signUp(tv);
  const phone = number();
  const factor = (await enrollPhone(tv, s.access_token, phone)).body;
  const c = await tv.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} });
  t.equal(c.status, 200);
  const sent = await sms.waitForMessage(phone);
  t.equal(sent.gateway, 'twilio_verify');
  const wrong = await verify(tv, s.access_token, factor.id, c.body.id, sent.code === '000000' ? '111111' : '000000');
  t.equal(wrong.body.error_code, 'otp_expired');
  // A check the gateway fails (an outage, its attempts spent) is a code that did not verify, as the original answers it.
  sms.failNext('twilio_verify');
  const failed = await verify(tv, s.access_token, factor.id, c.body.id, sent.code!);
  t.same([failed.status, failed.body.error_code, failed.body.msg], [403, 'otp_expired', 'Token has expired or is invalid']);
  const v = await verify(tv, s.access_token, factor.id, c.body.id, sent.code!);
  t.equal(v.status, 200);
  t.equal(claimsOf(v.body.access_token).aal, 'aal2');
});

t.test('with the send SMS hook, a challenge goes to the hook as an "mfa" code and no gateway is needed, as the original', async (t) => {
  const hooked = await startTestService({
    ...phoneOn,
    AUTH_HOOK_SEND_SMS_ENABLED: 'true',
    AUTH_HOOK_SEND_SMS_URI: 'pg-functions://postgres/sms_hook_test/send',
  });
  t.teardown(() => hooked.stop());
  await hooked.db.query(`
    create schema sms_hook_test;
    create table sms_hook_test.events (id bigserial primary key, event jsonb not null);
    create function sms_hook_test.send(event jsonb) returns jsonb language plpgsql as $$
    begin insert into sms_hook_test.events (event) values (event); return '{}'::jsonb; end $$;
  `);
  const s = await signUp(hooked);
  const phone = number();
  const factor = (await enrollPhone(hooked, s.access_token, phone)).body;
  const c = await hooked.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} });
  t.equal(c.status, 200, 'no SMS_PROVIDER, and still a challenge');
  const { rows } = await hooked.db.query('select event from sms_hook_test.events order by id desc limit 1');
  t.match(rows[0]?.event, { user: { id: s.user.id }, sms: { otp: /^\d{6}$/, sms_type: 'mfa', phone } });
  const v = await verify(hooked, s.access_token, factor.id, c.body.id, rows[0].event.sms.otp);
  t.equal(v.status, 200);
  t.equal(claimsOf(v.body.access_token).aal, 'aal2');
  t.equal(sms.messages.filter((m) => m.to === phone).length, 0, 'nothing went to a gateway');

  // The hook is not told the channel, so any string passes, as the original's channel check allows under
  // the hook; a channel that is not a string fails the body's decoding, like any field of the wrong type.
  const aal2 = v.body.access_token;
  const other = (await enrollPhone(hooked, aal2, number(), 'other')).body;
  const pigeon = await hooked.request('POST', `/factors/${other.id}/challenge`, { token: aal2, body: { channel: 'pigeon' } });
  t.equal(pigeon.status, 200, 'any channel under the hook');
  const third = (await enrollPhone(hooked, aal2, number(), 'third')).body;
  const numeric = await hooked.request('POST', `/factors/${third.id}/challenge`, { token: aal2, body: { channel: 5 } });
  t.same(errorOf(numeric), {
    status: 400,
    error_code: 'bad_json',
    msg: 'Could not parse request body as JSON: json: cannot unmarshal number into Go struct field ChallengeFactorParams.channel of type string',
  });

  // Ours: the hook's own error is the answer, as for every other SMS it sends (docs/differences.md#hooks).
  await hooked.db.query(`
    create or replace function sms_hook_test.send(event jsonb) returns jsonb language plpgsql as $$
    begin return '{"error": {"http_code": 429, "message": "SMS quota reached"}}'::jsonb; end $$;
  `);
  const refused = await hooked.request('POST', `/factors/${third.id}/challenge`, { token: aal2, body: {} });
  t.same(errorOf(refused), { status: 429, error_code: 'unknown', msg: 'SMS quota reached' });
  t.equal((await hooked.db.query('select 1 from mfa_challenges where factor_id = $1', [third.id])).rowCount, 0);
});
