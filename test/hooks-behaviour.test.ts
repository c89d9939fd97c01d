// The auth hooks compared with the original, black-box over HTTP (docs/hooks.md): what each hook receives in each
// flow (send email's email_data, send SMS's sms, the custom access token's authentication_method and claims, the
// verification attempt hooks, the user creation hooks), how the service acts on each answer, and the Standard
// Webhooks headers of every call.
import t from 'tap';
import { createHmac } from 'node:crypto';
import { decodeJwt } from 'jose';
import { Webhook } from 'standardwebhooks';
import { JWT_SECRET, startTestService } from './helpers/server.js';
import { linkKeyFor } from '../dist/server/verify/one-time-codes.js';
import { newHookSecret, startHookServer, type HookCall } from './helpers/hook-server.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSWORD, adminCreatedUser } from './helpers/users.js';
import { challenge, enrollTotp, totpCode, verify } from './helpers/mfa.js';
import { fragmentOf } from './helpers/passwordless.js';

const hooks = await startHookServer();
// Three secrets, as during a rotation: the endpoint checks each signature against its own secret below.
const SECRETS = [newHookSecret(), newHookSecret(), hooks.secret];
const HOOKS = {
  CUSTOM_ACCESS_TOKEN: '/custom-access-token',
  BEFORE_USER_CREATED: '/before-user-created',
  AFTER_USER_CREATED: '/after-user-created',
  SEND_EMAIL: '/send-email',
  SEND_SMS: '/send-sms',
  PASSWORD_VERIFICATION_ATTEMPT: '/password-verification-attempt',
  MFA_VERIFICATION_ATTEMPT: '/mfa-verification-attempt',
};
const hookEnv = Object.fromEntries(
  Object.entries(HOOKS).flatMap(([name, path]) => [
    [`AUTH_HOOK_${name}_ENABLED`, 'true'],
    [`AUTH_HOOK_${name}_URI`, `${hooks.url}${path}`],
    [`AUTH_HOOK_${name}_SECRETS`, SECRETS.join('|')],
  ]),
);
const api = await startTestService({
  ...hookEnv,
  AUTH_JWT_ISSUER: 'https://auth.example.com/auth/v1',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_MFA_PHONE_ENROLL_ENABLED: 'true',
  AUTH_MFA_PHONE_VERIFY_ENABLED: 'true',
  AUTH_MAILER_NOTIFICATIONS_PASSWORD_CHANGED_ENABLED: 'true',
  AUTH_MAILER_NOTIFICATIONS_EMAIL_CHANGED_ENABLED: 'true',
  AUTH_MAILER_NOTIFICATIONS_PHONE_CHANGED_ENABLED: 'true',
  AUTH_MAILER_NOTIFICATIONS_MFA_FACTOR_ENROLLED_ENABLED: 'true',
});
t.teardown(async () => {
  await api.stop();
  await hooks.close();
});

// A well-behaved endpoint unless a test scripts otherwise: every hook accepts, the token hook keeps the claims.
hooks.on(HOOKS.CUSTOM_ACCESS_TOKEN, (p) => ({ body: { claims: p.claims } }));
for (const path of [HOOKS.BEFORE_USER_CREATED, HOOKS.AFTER_USER_CREATED, HOOKS.SEND_EMAIL, HOOKS.SEND_SMS])
  hooks.on(path, () => ({ body: {} }));
hooks.on(HOOKS.PASSWORD_VERIFICATION_ATTEMPT, () => ({ body: { decision: 'continue' } }));
hooks.on(HOOKS.MFA_VERIFICATION_ATTEMPT, () => ({ body: { decision: 'continue' } }));

const SITE_URL = 'http://localhost:3000';
/**
 * The token_hash of a code: the original's SHA-224 of the address and the code, in hex, keyed here with the
 * service's link key (docs/one-time-codes-and-mail.md#codes-and-link-tokens).
 */
const linkKey = linkKeyFor({ secret: JWT_SECRET, keys: [] });
const tokenHash = (address: string, otp: string) =>
  createHmac('sha224', linkKey)
    .update(address + otp)
    .digest('hex');
const callsSince = (mark: number, path: string) => hooks.calls.slice(mark).filter((c) => c.path === path);
const lastPayload = (path: string) => hooks.callsTo(path).at(-1)!.payload;
const mark = () => hooks.calls.length;
const pkce = { code_challenge: 'x'.repeat(43), code_challenge_method: 'plain' };
const pkceVerifier = 'x'.repeat(43);

const confirmedUser = (email = uniqueEmail('hb')) => adminCreatedUser(api, email);
const signIn = (email: string, password = PASSWORD) => api.request('POST', '/token?grant_type=password', { body: { email, password } });
async function session(email: string): Promise<{ access_token: string; refresh_token: string }> {
  const res = await signIn(email);
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${res.text}`);
  return res.body;
}

t.test(
  'Standard Webhooks headers: a v4 id, a timestamp in seconds, one v1 signature per secret, each verifiable; no compression',
  async (t) => {
    const user = await confirmedUser();
    const m = mark();
    t.equal((await signIn(user.email)).status, 200);
    const calls = hooks.calls.slice(m);
    t.same(
      calls.map((c) => c.path),
      [HOOKS.PASSWORD_VERIFICATION_ATTEMPT, HOOKS.CUSTOM_ACCESS_TOKEN],
    );
    const now = Math.floor(Date.now() / 1000);
    for (const call of calls) {
      const h = call.headers;
      t.equal(h['content-type'], 'application/json');
      // As the original asks: an uncompressed answer, so the 200 KiB limit counts what was sent.
      t.equal(h['accept-encoding'], 'identity');
      t.match(h['webhook-id'], /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      t.match(h['webhook-timestamp'], /^\d+$/);
      t.ok(Math.abs(Number(h['webhook-timestamp']) - now) <= 30, 'the time of the call, in seconds');
      const signatures = String(h['webhook-signature']).split(', ');
      t.equal(signatures.length, SECRETS.length, 'one signature per secret, joined by ", "');
      for (const [i, signature] of signatures.entries()) {
        t.match(signature, /^v1,[A-Za-z0-9+/]{43}=$/, 'v1, then a base64 HMAC-SHA256');
        const alone = {
          'webhook-id': String(h['webhook-id']),
          'webhook-timestamp': String(h['webhook-timestamp']),
          'webhook-signature': signature,
        };
        t.doesNotThrow(
          () => new Webhook(SECRETS[i].slice('v1,'.length)).verify(JSON.stringify(call.payload), alone),
          `signature ${i} by secret ${i}`,
        );
      }
      t.match(call.payload.metadata, {
        uuid: /^[0-9a-f-]{36}$/,
        name: /^(password-verification|customize-access-token)$/,
        ip_address: '127.0.0.1',
      });
      t.ok(Math.abs(Date.parse(call.payload.metadata.time) / 1000 - now) <= 30, 'metadata.time is the time of the call');
    }
    t.not(calls[0].headers['webhook-id'], calls[1].headers['webhook-id'], 'a fresh id per call');
  },
);

t.test('send email: email_data of each mail that carries a code, as the original fills it', async (t) => {
  const base = { site_url: api.url, token_new: '', token_hash_new: '', old_email: '', old_phone: '', provider: '', factor_type: '' };
  const dataOf = (m: number) => {
    const calls = callsSince(m, HOOKS.SEND_EMAIL);
    t.equal(calls.length, 1, 'one hook call');
    return calls[0]?.payload.email_data;
  };
  const sent = (data: any, address: string, type: string, redirectTo: string) => {
    t.match(data.token, /^\d{6}$/, `${type}: a six-digit code`);
    t.strictSame(data, {
      ...base,
      token: data.token,
      token_hash: tokenHash(address, data.token),
      redirect_to: redirectTo,
      email_action_type: type,
    });
  };

  const signupEmail = uniqueEmail('hb-signup');
  let m = mark();
  t.equal(
    (await api.request('POST', `/signup?redirect_to=${SITE_URL}/welcome`, { body: { email: signupEmail, password: PASSWORD } })).status,
    200,
  );
  sent(dataOf(m), signupEmail, 'signup', `${SITE_URL}/welcome`);

  const user = await confirmedUser();
  m = mark();
  t.equal((await api.request('POST', '/otp', { body: { email: user.email } })).status, 200);
  sent(dataOf(m), user.email, 'magiclink', SITE_URL);

  await api.db.query(`update users set recovery_sent_at = null where id = $1`, [user.id]);
  m = mark();
  t.equal((await api.request('POST', '/recover', { body: { email: user.email } })).status, 200);
  sent(dataOf(m), user.email, 'recovery', SITE_URL);

  const invited = uniqueEmail('hb-invite');
  m = mark();
  t.equal((await api.request('POST', '/invite', { token: await adminToken(), body: { email: invited } })).status, 200);
  sent(dataOf(m), invited, 'invite', SITE_URL);

  const otpSignup = uniqueEmail('hb-otp-signup');
  m = mark();
  t.equal((await api.request('POST', '/otp', { body: { email: otpSignup, create_user: true } })).status, 200);
  sent(dataOf(m), otpSignup, 'signup', SITE_URL);

  const s = await session(user.email);
  m = mark();
  t.equal((await api.request('GET', '/reauthenticate', { token: s.access_token })).status, 200);
  sent(dataOf(m), user.email, 'reauthentication', SITE_URL);

  // PKCE: the link's token_hash carries the flow's prefix, as the original's tokenHashWithPrefix.
  const pkceUser = await confirmedUser();
  m = mark();
  t.equal((await api.request('POST', '/otp', { body: { email: pkceUser.email, ...pkce } })).status, 200);
  const pkceData = dataOf(m);
  t.match(pkceData, { email_action_type: 'magiclink', token: /^\d{6}$/, token_hash: /^pkce_[0-9a-f-]+$/ });
});

t.test('send email: a secure email change pairs the codes as the original does (its BC-kept mismatch)', async (t) => {
  const user = await confirmedUser();
  const s = await session(user.email);
  const newEmail = uniqueEmail('hb-new');
  const m = mark();
  t.equal((await api.request('PUT', '/user', { token: s.access_token, body: { email: newEmail } })).status, 200);
  const calls = callsSince(m, HOOKS.SEND_EMAIL);
  t.equal(calls.length, 1, 'one call for both addresses');
  const data = calls[0].payload.email_data;
  t.match(data, { email_action_type: 'email_change', token: /^\d{6}$/, token_new: /^\d{6}$/, redirect_to: SITE_URL, site_url: api.url });
  // token is the current address's code, token_hash the new address's link, token_hash_new the current's.
  t.equal(data.token_hash, tokenHash(newEmail, data.token_new));
  t.equal(data.token_hash_new, tokenHash(user.email, data.token));
  t.equal(calls[0].payload.user.new_email, newEmail);
});

t.test('send email: account-change notifications carry no code, and old_email, old_phone or factor_type', async (t) => {
  const user = await confirmedUser();
  const s = await session(user.email);
  const base = { token: '', token_hash: '', token_new: '', token_hash_new: '', site_url: api.url, redirect_to: SITE_URL, provider: '' };
  const notified = async (m: number, type: string) => {
    // Notifications go out after the change commits; give the request's tail a moment.
    for (let i = 0; i < 50 && !callsSince(m, HOOKS.SEND_EMAIL).some((c) => c.payload.email_data.email_action_type === type); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    return callsSince(m, HOOKS.SEND_EMAIL).find((c) => c.payload.email_data.email_action_type === type)?.payload;
  };

  let m = mark();
  t.equal((await api.request('PUT', '/user', { token: s.access_token, body: { password: 'Another-password-2' } })).status, 200);
  t.strictSame((await notified(m, 'password_changed_notification'))?.email_data, {
    ...base,
    email_action_type: 'password_changed_notification',
    old_email: '',
    old_phone: '',
    factor_type: '',
  });

  // The change notifications go out once a change is verified, as the original sends them from /verify.
  const phone = '15550007001';
  await api.db.query('update users set phone = $2, phone_confirmed_at = now() where id = $1', [user.id, phone]);
  const other = '15550007002';
  t.equal((await api.request('PUT', '/user', { token: s.access_token, body: { phone: other } })).status, 200);
  const otp = lastPayload(HOOKS.SEND_SMS).sms.otp;
  m = mark();
  t.equal((await api.request('POST', '/verify', { body: { type: 'phone_change', phone: other, token: otp } })).status, 200);
  t.strictSame((await notified(m, 'phone_changed_notification'))?.email_data, {
    ...base,
    email_action_type: 'phone_changed_notification',
    old_email: '',
    old_phone: phone,
    factor_type: '',
  });

  const newEmail = uniqueEmail('hb-notified');
  t.equal((await api.request('PUT', '/user', { token: s.access_token, body: { email: newEmail } })).status, 200);
  const change = lastPayload(HOOKS.SEND_EMAIL).email_data;
  t.equal((await api.request('POST', '/verify', { body: { type: 'email_change', email: user.email, token: change.token } })).status, 200);
  m = mark();
  t.equal((await api.request('POST', '/verify', { body: { type: 'email_change', token_hash: change.token_hash } })).status, 200);
  t.strictSame((await notified(m, 'email_changed_notification'))?.email_data, {
    ...base,
    email_action_type: 'email_changed_notification',
    old_email: user.email,
    old_phone: '',
    factor_type: '',
  });

  const token = s.access_token;
  m = mark();
  const factor = await enrollTotp(api, token);
  const c = await challenge(api, token, factor.id);
  t.equal((await verify(api, token, factor.id, c.body.id, totpCode(factor.totp.secret))).status, 200);
  t.match((await notified(m, 'mfa_factor_enrolled_notification'))?.email_data, {
    ...base,
    email_action_type: 'mfa_factor_enrolled_notification',
    factor_type: 'totp',
  });
});

t.test('send SMS: sms is {otp, phone} for sign-in codes, with sms_type "mfa" for an MFA challenge', async (t) => {
  const phone = '15550008001';
  let m = mark();
  t.equal((await api.request('POST', '/otp', { body: { phone } })).status, 200);
  const signIn = callsSince(m, HOOKS.SEND_SMS)[0].payload;
  t.same(Object.keys(signIn).sort(), ['metadata', 'sms', 'user']);
  t.strictSame(signIn.sms, { otp: signIn.sms.otp, phone });
  t.match(signIn.sms.otp, /^\d{6}$/);
  t.match(signIn.user, { phone, identities: [] });
  t.equal(signIn.metadata.name, 'send-sms');
  m = mark();
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone, token: signIn.sms.otp } });
  t.equal(verified.status, 200);
  t.equal(callsSince(m, HOOKS.CUSTOM_ACCESS_TOKEN)[0]?.payload.authentication_method, 'otp');

  const user = await confirmedUser();
  const s = await session(user.email);
  const enrolled = await api.request('POST', '/factors', {
    token: s.access_token,
    body: { factor_type: 'phone', phone: '+1 555 000 8002' },
  });
  t.equal(enrolled.status, 200);
  m = mark();
  const c = await challenge(api, s.access_token, enrolled.body.id);
  t.equal(c.status, 200);
  const mfa = callsSince(m, HOOKS.SEND_SMS)[0].payload;
  t.strictSame(mfa.sms, { otp: mfa.sms.otp, sms_type: 'mfa', phone: '15550008002' });
  m = mark();
  t.equal((await verify(api, s.access_token, enrolled.body.id, c.body.id, mfa.sms.otp)).status, 200);
  t.strictSame(callsSince(m, HOOKS.MFA_VERIFICATION_ATTEMPT)[0].payload.factor_type, 'phone');
  t.equal(callsSince(m, HOOKS.CUSTOM_ACCESS_TOKEN)[0]?.payload.authentication_method, 'mfa/phone');
});

t.test('custom access token: the payload and the authentication_method of each way a token is issued', async (t) => {
  const methodOf = (m: number) => callsSince(m, HOOKS.CUSTOM_ACCESS_TOKEN).map((c: HookCall) => c.payload.authentication_method);

  const user = await confirmedUser();
  let m = mark();
  const s = await signIn(user.email);
  t.same(methodOf(m), ['password']);
  const payload = lastPayload(HOOKS.CUSTOM_ACCESS_TOKEN);
  t.same(Object.keys(payload).sort(), ['authentication_method', 'claims', 'metadata', 'user_id']);
  t.equal(payload.user_id, user.id);
  // The original's AccessTokenClaims: no jti, nbf, client_id or scope outside the OAuth server (iss as JWT_ISSUER is set).
  t.same(Object.keys(payload.claims).sort(), [
    'aal',
    'amr',
    'app_metadata',
    'aud',
    'email',
    'exp',
    'iat',
    'is_anonymous',
    'iss',
    'phone',
    'role',
    'session_id',
    'sub',
    'user_metadata',
  ]);
  t.match(payload.claims, {
    iss: 'https://auth.example.com/auth/v1',
    sub: user.id,
    aud: 'authenticated',
    email: user.email,
    phone: '',
    aal: 'aal1',
    amr: [{ method: 'password' }],
  });

  m = mark();
  t.equal((await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: s.body.refresh_token } })).status, 200);
  t.same(methodOf(m), ['token_refresh']);

  m = mark();
  t.equal((await api.request('POST', '/signup', { body: {} })).status, 200);
  t.same(methodOf(m), ['anonymous']);

  // Every /verify that signs in directly is "otp" in the original, whatever the mail.
  const signupEmail = uniqueEmail('hb-verify');
  await api.request('POST', '/signup', { body: { email: signupEmail, password: PASSWORD } });
  const signupData = lastPayload(HOOKS.SEND_EMAIL).email_data;
  m = mark();
  t.equal((await api.request('POST', '/verify', { body: { type: 'signup', token_hash: signupData.token_hash } })).status, 200);
  t.same(methodOf(m), ['otp']);

  await api.request('POST', '/otp', { body: { email: user.email } });
  const link = lastPayload(HOOKS.SEND_EMAIL).email_data;
  m = mark();
  const viaLink = await api.request('GET', `/verify?type=magiclink&token=${link.token_hash}&redirect_to=${SITE_URL}`);
  t.equal(viaLink.status, 303);
  t.ok(fragmentOf(viaLink.headers.get('location')).access_token);
  t.same(methodOf(m), ['otp'], 'GET /verify too');

  // PKCE: the flow's own method, as recorded with its flow state.
  const pkceFlows: Array<[string, () => Promise<string>, string]> = [
    [
      'magiclink',
      async () => {
        // Another user: this one's last code went out less than MAILER_OTP_MAX_FREQUENCY ago.
        const fresh = await confirmedUser();
        t.equal((await api.request('POST', '/otp', { body: { email: fresh.email, ...pkce } })).status, 200);
        return 'magiclink';
      },
      'magiclink',
    ],
    [
      'recovery',
      async () => {
        await api.db.query(`update users set recovery_sent_at = null where id = $1`, [user.id]);
        await api.request('POST', '/recover', { body: { email: user.email, ...pkce } });
        return 'recovery';
      },
      'recovery',
    ],
    [
      'signup',
      async () => {
        await api.request('POST', '/signup', { body: { email: uniqueEmail('hb-pkce'), password: PASSWORD, ...pkce } });
        return 'signup';
      },
      'email/signup',
    ],
  ];
  for (const [what, send, method] of pkceFlows) {
    const type = await send();
    const data = lastPayload(HOOKS.SEND_EMAIL).email_data;
    const verified = await api.request('GET', `/verify?type=${type}&token=${data.token_hash}&redirect_to=${SITE_URL}`);
    const code = new URL(verified.headers.get('location') ?? '', api.url).searchParams.get('code');
    t.ok(code, `${what}: an auth code`);
    m = mark();
    const exchanged = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: code, code_verifier: pkceVerifier } });
    t.equal(exchanged.status, 200, what);
    t.same(methodOf(m), [method], `${what}: ${method}`);
  }

  const factor = await enrollTotp(api, s.body.access_token);
  const c = await challenge(api, s.body.access_token, factor.id);
  m = mark();
  t.equal((await verify(api, s.body.access_token, factor.id, c.body.id, totpCode(factor.totp.secret))).status, 200);
  t.same(methodOf(m), ['totp']);
});

t.test('custom access token: the hook may change any claim; the required ones must stay, with their types', async (t) => {
  const user = await confirmedUser();
  hooks.once(HOOKS.CUSTOM_ACCESS_TOKEN, (p) => ({
    body: { claims: { ...p.claims, role: 'premium', aud: ['a', 'b'], is_anonymous: 'any type', extra: 1 } },
  }));
  const changed = await signIn(user.email);
  t.equal(changed.status, 200);
  t.match(decodeJwt(changed.body.access_token), { role: 'premium', aud: ['a', 'b'], is_anonymous: 'any type', extra: 1 });

  // The original's wording (its JSON schema library's): "<field>: <description>", one line each, the
  // missing claims first, in the order of its schema's required list.
  const refused = async (claims: (c: any) => unknown) => {
    hooks.once(HOOKS.CUSTOM_ACCESS_TOKEN, (p) => ({ body: { claims: claims(p.claims) } }));
    const res = await signIn(user.email);
    t.same([res.status, res.body.error_code], [500, 'unexpected_failure']);
    return res.body.msg;
  };
  const PREFIX = 'output claims do not conform to the expected schema: \n';
  t.equal(
    await refused(({ sub: _s, is_anonymous: _a, ...rest }) => rest),
    `${PREFIX}- (root): sub is required\n- (root): is_anonymous is required\n`,
  );
  t.equal(await refused((c) => ({ ...c, exp: String(c.exp) })), `${PREFIX}- exp: Invalid type. Expected: integer, given: string\n`);
  t.equal(await refused((c) => ({ ...c, iat: c.iat + 0.5 })), `${PREFIX}- iat: Invalid type. Expected: integer, given: number\n`);
  t.equal(await refused((c) => ({ ...c, aud: 7 })), `${PREFIX}- aud: Invalid type. Expected: [string,array], given: integer\n`);
  t.equal(await refused((c) => ({ ...c, email: null })), `${PREFIX}- email: Invalid type. Expected: string, given: null\n`);
  t.equal(
    await refused((c) => ({ ...c, amr: [7] })),
    `${PREFIX}- amr.0: Must validate at least one schema (anyOf)\n- amr.0: Invalid type. Expected: string, given: integer\n`,
  );
  t.equal(await refused(() => null), `${PREFIX}- (root): Invalid type. Expected: object, given: null\n`);
});

t.test('password verification attempt: payload; reject is 400 invalid_credentials with the message or the default', async (t) => {
  const user = await confirmedUser();
  const m = mark();
  t.equal((await signIn(user.email, 'wrong-password')).status, 400);
  const told = callsSince(m, HOOKS.PASSWORD_VERIFICATION_ATTEMPT)[0].payload;
  t.same(Object.keys(told).sort(), ['metadata', 'user_id', 'valid']);
  t.match(told, { user_id: user.id, valid: false, metadata: { name: 'password-verification' } });

  hooks.once(HOOKS.PASSWORD_VERIFICATION_ATTEMPT, { body: { decision: 'reject' } });
  const plain = await signIn(user.email);
  t.strictSame(plain.body, {
    code: 400,
    error_code: 'invalid_credentials',
    msg: 'Further password verification attempts will be rejected.',
  });
  hooks.once(HOOKS.PASSWORD_VERIFICATION_ATTEMPT, { body: { decision: 'reject', message: 'Locked for an hour' } });
  const worded = await signIn(user.email);
  t.strictSame(worded.body, { code: 400, error_code: 'invalid_credentials', msg: 'Locked for an hour' });
  // Any decision but "reject" lets the password's verdict stand.
  hooks.once(HOOKS.PASSWORD_VERIFICATION_ATTEMPT, { body: { decision: 'Reject' } });
  t.equal((await signIn(user.email)).status, 200);
  hooks.once(HOOKS.PASSWORD_VERIFICATION_ATTEMPT, { body: { decision: 'continue' } });
  t.strictSame((await signIn(user.email, 'wrong-password')).body.msg, 'Invalid login credentials');
});

t.test('MFA verification attempt: payload; reject is 403 mfa_verification_rejected and ends every session', async (t) => {
  const user = await confirmedUser();
  const s = await session(user.email);
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  let m = mark();
  hooks.once(HOOKS.MFA_VERIFICATION_ATTEMPT, { body: { decision: 'continue' } });
  t.equal((await verify(api, s.access_token, factor.id, c.body.id, '000000')).status, 422);
  const told = callsSince(m, HOOKS.MFA_VERIFICATION_ATTEMPT)[0].payload;
  t.same(Object.keys(told).sort(), ['factor_id', 'factor_type', 'metadata', 'user_id', 'valid']);
  t.match(told, { user_id: user.id, factor_id: factor.id, factor_type: 'totp', valid: false, metadata: { name: 'mfa-verification' } });

  m = mark();
  hooks.once(HOOKS.MFA_VERIFICATION_ATTEMPT, { body: { decision: 'reject' } });
  const rejected = await verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret));
  t.strictSame(rejected.body, {
    code: 403,
    error_code: 'mfa_verification_rejected',
    msg: 'Further MFA verification attempts will be rejected.',
  });
  t.equal(callsSince(m, HOOKS.MFA_VERIFICATION_ATTEMPT)[0].payload.valid, true);
  const left = await api.db.query('select count(*)::int as n from sessions where user_id = $1', [user.id]);
  t.equal(left.rows[0].n, 0, 'every session ended');
});

t.test('an {"error": …} answer: its status and message pass through; no http_code or one outside 4xx/5xx is 500', async (t) => {
  const user = await confirmedUser();
  const cases: Array<[unknown, number, string]> = [
    [{ http_code: 403, message: 'Not today' }, 403, 'unknown'],
    [{ http_code: 429, message: 'Slow down' }, 429, 'unknown'],
    [{ http_code: 400, message: 'Bad' }, 400, 'unknown'],
    [{ http_code: 503, message: 'Down' }, 503, 'unknown'],
    [{ http_code: 500, message: 'Broken' }, 500, 'unexpected_failure'],
    [{ message: 'No code' }, 500, 'unexpected_failure'],
  ];
  for (const [error, status, code] of cases) {
    hooks.once(HOOKS.PASSWORD_VERIFICATION_ATTEMPT, { body: { error } });
    const res = await signIn(user.email);
    t.strictSame(
      [res.status, res.body.error_code, res.body.msg],
      [status, code, (error as { message: string }).message],
      JSON.stringify(error),
    );
  }
  // Where the original would answer with the hook's own non-error status (200, a redirect), ours is a 500.
  hooks.once(HOOKS.PASSWORD_VERIFICATION_ATTEMPT, { body: { error: { http_code: 302, message: 'Elsewhere' } } });
  const odd = await signIn(user.email);
  t.strictSame([odd.status, odd.body.error_code, odd.body.msg], [500, 'unexpected_failure', 'Elsewhere']);
  // An error without a message is no error, as in the original: the answer is the output.
  hooks.once(HOOKS.PASSWORD_VERIFICATION_ATTEMPT, { body: { error: { http_code: 403 }, decision: 'continue' } });
  t.equal((await signIn(user.email)).status, 200);

  // The same for the user creation hook: the refusal is the sign-up's answer and nothing is written.
  const email = uniqueEmail('hb-refused');
  hooks.once(HOOKS.BEFORE_USER_CREATED, { body: { error: { http_code: 400, message: 'Only work addresses' } } });
  const refused = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  t.strictSame([refused.status, refused.body.error_code, refused.body.msg], [400, 'unknown', 'Only work addresses']);
  t.equal((await api.db.query('select 1 from users where email = $1', [email])).rowCount, 0);
});

t.test('before and after user created: the user about to be written, then the same user as committed', async (t) => {
  const email = uniqueEmail('hb-created');
  const m = mark();
  const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD, data: { plan: 'pro' } } });
  t.equal(res.status, 200);
  const before = callsSince(m, HOOKS.BEFORE_USER_CREATED)[0].payload;
  const after = callsSince(m, HOOKS.AFTER_USER_CREATED)[0].payload;
  t.same(Object.keys(before).sort(), ['metadata', 'user']);
  t.same(Object.keys(after).sort(), ['metadata', 'user']);
  t.equal(before.metadata.name, 'before-user-created');
  t.equal(after.metadata.name, 'after-user-created');
  t.match(before.user, { id: res.body.id, email, aud: 'authenticated', role: 'authenticated', user_metadata: { plan: 'pro' } });
  t.match(after.user, { id: res.body.id, email, user_metadata: { plan: 'pro' }, identities: [{ provider: 'email' }] });
  const order = hooks.calls.slice(m).map((c) => c.path);
  t.ok(order.indexOf(HOOKS.BEFORE_USER_CREATED) < order.indexOf(HOOKS.SEND_EMAIL), 'asked before the confirmation mail');
  t.ok(order.indexOf(HOOKS.SEND_EMAIL) < order.indexOf(HOOKS.AFTER_USER_CREATED), 'told after it');
});
