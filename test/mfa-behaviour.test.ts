// MFA answers compared with the original's, for the cases the other MFA files leave open: a challenge
// verified from another address, the verify bucket spent by wrong codes, what a session keeps when one
// of its two factors goes, MFA_MAX_VERIFIED_FACTORS, and a phone factor's code with the default settings.
import t from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { startSmsGatewayFake, twilioEnv, type SmsGatewayFake } from './helpers/sms.js';
import { refresh, signUp } from './helpers/accounts.js';
import { challenge, claimsOf, enrollTotp, totpCode, verifiedTotp, verify } from './helpers/mfa.js';

let sms: SmsGatewayFake;
let api: TestService;
t.before(async () => {
  sms = await startSmsGatewayFake();
  api = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_MFA_PHONE_ENROLL_ENABLED: 'true',
    AUTH_MFA_PHONE_VERIFY_ENABLED: 'true',
    AUTH_RATE_LIMIT_HEADER: 'X-Client',
    ...twilioEnv(sms.baseUrl),
  });
});
t.teardown(async () => {
  await api.stop();
  await sms.close();
});

const errorOf = (res: { status: number; body: any }) => ({ status: res.status, error_code: res.body?.error_code, msg: res.body?.msg });
const methodsOf = (accessToken: string) => (claimsOf(accessToken).amr as Array<{ method: string }>).map((e) => e.method);

/** A six-digit code no time step near now has, so that a refusal never depends on the clock. */
function wrongCode(secret: string): string {
  const near = [-60_000, -30_000, 0, 30_000, 60_000].map((d) => totpCode(secret, Date.now() + d));
  return ['000000', '111111', '222222', '333333', '444444', '555555'].find((c) => !near.includes(c))!;
}

t.test('a challenge verified from another address is 422 mfa_ip_address_mismatch and stays good for its own', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const c = await api.request('POST', `/factors/${factor.id}/challenge`, {
    token: s.access_token,
    headers: { 'x-forwarded-for': '203.0.113.10' },
    body: {},
  });
  t.equal(c.status, 200);
  const elsewhere = await api.request('POST', `/factors/${factor.id}/verify`, {
    token: s.access_token,
    headers: { 'x-forwarded-for': '198.51.100.20' },
    body: { challenge_id: c.body.id, code: totpCode(factor.totp.secret) },
  });
  t.same(errorOf(elsewhere), { status: 422, error_code: 'mfa_ip_address_mismatch', msg: 'Challenge and verify IP addresses mismatch.' });
  // The same address written as an IPv4-mapped IPv6 one is that address, as Go reads it.
  const same = await api.request('POST', `/factors/${factor.id}/verify`, {
    token: s.access_token,
    headers: { 'x-forwarded-for': '::ffff:203.0.113.10' },
    body: { challenge_id: c.body.id, code: totpCode(factor.totp.secret) },
  });
  t.equal(same.status, 200, same.text);
  t.equal(claimsOf(same.body.access_token).aal, 'aal2');
});

t.test('wrong codes spend the verify bucket (burst 30), then 429; another client is still told the code is wrong', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  const code = wrongCode(factor.totp.secret);
  const attempt = (client: string) =>
    api.request('POST', `/factors/${factor.id}/verify`, {
      token: s.access_token,
      headers: { 'x-client': client },
      body: { challenge_id: c.body.id, code },
    });
  for (let i = 0; i < 30; i++) {
    const res = await attempt('wrong-codes-a');
    if (res.body?.error_code !== 'mfa_verification_failed') t.fail(`attempt ${i}: ${res.status} ${res.text}`);
  }
  t.same(errorOf(await attempt('wrong-codes-a')), {
    status: 429,
    error_code: 'over_request_rate_limit',
    msg: 'Request rate limit reached',
  });
  t.same(errorOf(await attempt('wrong-codes-b')), { status: 422, error_code: 'mfa_verification_failed', msg: 'Invalid TOTP code entered' });
});

t.test("removing the factor a session names leaves the other method's claim: aal2 tokens, an aal1 session", async (t) => {
  // As the original: the unenrolment takes back only its own method and sets the session to aal1, while a
  // token's aal follows the AMR claims left, so a refresh still says aal2 but the session may not remove
  // the other verified factor.
  const s = await signUp(api);
  const { factor: totp, session } = await verifiedTotp(api, s.access_token, 'app');
  const phone = '14155550142';
  const enrolled = await api.request('POST', '/factors', {
    token: session.access_token,
    body: { factor_type: 'phone', phone: `+${phone}` },
  });
  t.equal(enrolled.status, 200, enrolled.text);
  const c = await api.request('POST', `/factors/${enrolled.body.id}/challenge`, { token: session.access_token, body: {} });
  const message = await sms.waitForMessage(phone);
  const code = /(\d+)$/.exec(message.body)![1];
  const v = await verify(api, session.access_token, enrolled.body.id, c.body.id, code);
  t.equal(v.status, 200, v.text);
  t.same(methodsOf(v.body.access_token).sort(), ['mfa/phone', 'password', 'totp']);

  const removed = await api.request('DELETE', `/factors/${enrolled.body.id}`, { token: v.body.access_token });
  t.same(removed.body, { id: enrolled.body.id });
  const refreshed = await refresh(api, v.body.refresh_token);
  t.equal(refreshed.status, 200);
  t.equal(claimsOf(refreshed.body.access_token).aal, 'aal2');
  t.same(methodsOf(refreshed.body.access_token).sort(), ['password', 'totp']);
  const other = await api.request('DELETE', `/factors/${totp.id}`, { token: refreshed.body.access_token });
  t.same(errorOf(other), { status: 422, error_code: 'insufficient_aal', msg: 'AAL2 required to unenroll verified factor' });
});

t.test('a phone code with the default settings: six digits in "Your code is …"; the factor lists the number without +', async (t) => {
  const s = await signUp(api);
  const enrolled = await api.request('POST', '/factors', {
    token: s.access_token,
    body: { factor_type: 'phone', phone: '+1 415 555 0143' },
  });
  t.same(enrolled.body, { id: enrolled.body.id, type: 'phone', friendly_name: '', phone: '+1 415 555 0143' }, 'the number as sent');
  const c = await api.request('POST', `/factors/${enrolled.body.id}/challenge`, { token: s.access_token, body: {} });
  t.equal(c.status, 200);
  const message = await sms.waitForMessage('14155550143');
  t.match(message.body, /^Your code is \d{6}$/);
  const user = await api.request('GET', '/user', { token: s.access_token });
  t.match(user.body.factors, [{ id: enrolled.body.id, factor_type: 'phone', phone: '14155550143', status: 'unverified' }]);
});

t.test('MFA_MAX_VERIFIED_FACTORS: enrolling past it is refused even at aal2', async (t) => {
  const limited = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_MFA_MAX_VERIFIED_FACTORS: '1' });
  t.teardown(() => limited.stop());
  const s = await signUp(limited);
  const first = await enrollTotp(limited, s.access_token, 'first');
  const second = await enrollTotp(limited, s.access_token, 'second');
  const c = await challenge(limited, s.access_token, first.id);
  const v = await verify(limited, s.access_token, first.id, c.body.id, totpCode(first.totp.secret));
  t.equal(v.status, 200);
  // The verification removed the other unverified TOTP factor, as the original's.
  t.same(errorOf(await challenge(limited, v.body.access_token, second.id)), {
    status: 404,
    error_code: 'mfa_factor_not_found',
    msg: 'Factor not found',
  });
  const third = await limited.request('POST', '/factors', {
    token: v.body.access_token,
    body: { factor_type: 'totp', friendly_name: 'third' },
  });
  t.same(errorOf(third), {
    status: 422,
    error_code: 'too_many_enrolled_mfa_factors',
    msg: 'Maximum number of verified factors reached, unenroll to continue',
  });
});
