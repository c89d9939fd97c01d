// TOTP factors over HTTP: enrolment, challenge, verification with codes an authenticator app would
// compute, the session raised to aal2, and every refusal of the original in its place.
import t from 'tap';
import { URI } from 'otpauth';
import { startTestService, type Reply, type TestService } from './helpers/server.js';
import { refresh, signIn, signUp, uniqueEmail } from './helpers/accounts.js';
import { challenge, claimsOf, enrollTotp, totpCode, verifiedTotp, verify } from './helpers/mfa.js';
import { adminToken } from './helpers/admin.js';
import { behindDeletion, holdLock, inOrderBehind } from './helpers/row-lock.js';

let api: TestService;
t.before(async () => {
  api = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_MFA_MAX_ENROLLED_FACTORS: '3',
    AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  });
});
t.teardown(() => api.stop());

const errorOf = (res: { status: number; body: any }) => ({ status: res.status, error_code: res.body?.error_code, msg: res.body?.msg });

t.test('enrolling answers the secret, an otpauth URI for SITE_URL and the email, and a QR code as SVG', async (t) => {
  const email = uniqueEmail();
  const s = await signUp(api, email);
  const res = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'phone app' } });
  t.equal(res.status, 200);
  t.same(Object.keys(res.body).sort(), ['friendly_name', 'id', 'totp', 'type']);
  t.equal(res.body.type, 'totp');
  t.equal(res.body.friendly_name, 'phone app');
  t.match(res.body.totp.secret, /^[A-Z2-7]{32}$/);
  t.match(res.body.totp.qr_code, /^<svg[\s\S]*<\/svg>$/);
  const otp = URI.parse(res.body.totp.uri);
  t.equal(otp.issuer, 'localhost:3000', 'issuer: SITE_URL host');
  // The label is "<issuer>:<account>" with each part escaped (otpauth's parser splits it at the escaped ':').
  t.ok(res.body.totp.uri.startsWith(`otpauth://totp/localhost%3A3000:${encodeURIComponent(email)}?`), 'label: issuer and email');
  t.equal(otp.secret.base32, res.body.totp.secret);
  t.equal((otp as any).period, 30);
  t.equal(otp.digits, 6);
  const user = await api.request('GET', '/user', { token: s.access_token });
  t.equal(user.body.factors.length, 1);
  t.match(user.body.factors[0], {
    id: res.body.id,
    factor_type: 'totp',
    status: 'unverified',
    friendly_name: 'phone app',
    last_challenged_at: null,
  });
  t.notOk('secret' in user.body.factors[0]);
  const issuer = await api.request('POST', '/factors', {
    token: s.access_token,
    body: { factor_type: 'totp', issuer: 'Acme', friendly_name: 'b' },
  });
  t.equal(URI.parse(issuer.body.totp.uri).issuer, 'Acme');
});

t.test("the default issuer is SITE_URL's host as written there, case and port kept, as the original reads it", async (t) => {
  const cased = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SITE_URL: 'https://Auth.Example.COM:443/app' });
  t.teardown(() => cased.stop());
  const s = await signUp(cased);
  const res = await cased.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp' } });
  t.equal(res.status, 200, res.text);
  t.equal(URI.parse(res.body.totp.uri).issuer, 'Auth.Example.COM:443');
});

t.test('a user without factors has no factors key', async (t) => {
  const s = await signUp(api);
  t.notOk('factors' in s.user);
  t.notOk('factors' in (await api.request('GET', '/user', { token: s.access_token })).body);
});

t.test('challenge then verify with the current code raises the session to aal2 with totp in amr', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const before = Math.floor(Date.now() / 1000);
  const c = await challenge(api, s.access_token, factor.id);
  t.equal(c.status, 200);
  t.same(Object.keys(c.body).sort(), ['expires_at', 'id', 'type']);
  t.equal(c.body.type, 'totp');
  t.ok(c.body.expires_at >= before + 299 && c.body.expires_at <= before + 302, 'expires 300 s after creation');
  t.equal(claimsOf(s.access_token).aal, 'aal1');
  const v = await verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret));
  t.equal(v.status, 200);
  const claims = claimsOf(v.body.access_token);
  t.equal(claims.aal, 'aal2');
  t.equal(claims.session_id, claimsOf(s.access_token).session_id, 'the same session, upgraded');
  t.same(
    claims.amr.map((a: any) => a.method),
    ['totp', 'password'],
  );
  t.not(v.body.refresh_token, s.refresh_token, 'a new refresh token');
  t.equal(v.body.user.factors[0].status, 'verified');
  const { rows } = await api.db.query('select aal, factor_id from sessions where id = $1', [claims.session_id]);
  t.same(rows[0], { aal: 'aal2', factor_id: factor.id });
  // The refresh grant keeps the level.
  const r = await refresh(api, v.body.refresh_token);
  t.equal(r.status, 200);
  t.equal(claimsOf(r.body.access_token).aal, 'aal2');
  t.equal(r.body.user.factors[0].status, 'verified', 'token responses list the factors');
  // The refresh token issued at aal1 is revoked by the upgrade.
  const old = await refresh(api, s.refresh_token);
  t.not(old.status, 200);
});

t.test('verifying on a session with a 12-character refresh token audits its swap token_revoked, as the original', async (t) => {
  const s = await signUp(api);
  const userId = claimsOf(s.access_token).sub;
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  const since = (await api.db.query('select now() as at')).rows[0].at;
  t.equal((await verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret))).status, 200);
  const { rows } = await api.db.query(
    `select payload->>'action' as action, payload->>'actor_id' as actor, ip_address from audit_log_entries
     where payload->>'actor_id' = $1 and created_at >= $2 order by action`,
    [userId, since],
  );
  t.strictSame(rows, [
    { action: 'token_revoked', actor: userId, ip_address: '' },
    { action: 'verification_attempted', actor: userId, ip_address: rows[1]?.ip_address },
  ]);
  t.not(rows[1]?.ip_address, '', 'the verification names the client');
});

t.test('within SECURITY_REFRESH_TOKEN_REUSE_INTERVAL, no token revoked before the upgrade gets an aal2 child', async (t) => {
  const withInterval = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SECURITY_REFRESH_TOKEN_REUSE_INTERVAL: '10' });
  t.teardown(() => withInterval.stop());
  const s = await signUp(withInterval);
  const rotated = await refresh(withInterval, s.refresh_token); // s.refresh_token now has a child, as a rotated token
  const factor = await enrollTotp(withInterval, rotated.body.access_token);
  const c = await challenge(withInterval, rotated.body.access_token, factor.id);
  const v = await verify(withInterval, rotated.body.access_token, factor.id, c.body.id, totpCode(factor.totp.secret));
  t.equal(v.status, 200);
  // Both were revoked moments ago, within the interval, and both have a child: refused all the same.
  t.equal((await refresh(withInterval, s.refresh_token)).body.error_code, 'refresh_token_already_used', 'the token rotated before');
  t.equal((await refresh(withInterval, rotated.body.refresh_token)).body.error_code, 'refresh_token_already_used', 'the aal1 token');
});

t.test("verifying ends the user's other aal1 sessions and removes other unverified TOTP factors", async (t) => {
  const email = uniqueEmail();
  const s = await signUp(api, email);
  const other = await signIn(api, email);
  const stale = await enrollTotp(api, s.access_token, 'never verified');
  const factor = await enrollTotp(api, s.access_token, 'used');
  const c = await challenge(api, s.access_token, factor.id);
  const v = await verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret));
  t.equal(v.status, 200);
  t.equal((await refresh(api, other.refresh_token)).status, 400, 'the other session is gone');
  const ids = (await api.request('GET', '/user', { token: v.body.access_token })).body.factors.map((f: any) => f.id);
  t.same(ids, [factor.id]);
  t.notOk(ids.includes(stale.id));
});

t.test('a code pasted with spaces or a newline around it verifies, as the original trims it', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  const v = await verify(api, s.access_token, factor.id, c.body.id, ` ${totpCode(factor.totp.secret)}\n`);
  t.equal(v.status, 200);
  t.equal(claimsOf(v.body.access_token).aal, 'aal2');
});

t.test('a wrong code is refused and changes nothing', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  // A code no nearby time step has, so the refusal never depends on the clock.
  const near = [-60_000, -30_000, 0, 30_000, 60_000].map((d) => totpCode(factor.totp.secret, Date.now() + d));
  const wrong = ['000000', '111111', '222222', '333333', '444444', '555555'].find((c) => !near.includes(c))!;
  const v = await verify(api, s.access_token, factor.id, c.body.id, wrong);
  t.same(errorOf(v), { status: 422, error_code: 'mfa_verification_failed', msg: 'Invalid TOTP code entered' });
  const { rows } = await api.db.query(
    'select f.status, c.verified_at from mfa_factors f join mfa_challenges c on c.factor_id = f.id where f.id = $1',
    [factor.id],
  );
  t.same(rows, [{ status: 'unverified', verified_at: null }]);
  // The challenge is still good for the right code.
  t.equal((await verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret))).status, 200);
});

t.test('a code already accepted is refused on a new challenge; a used challenge is refused', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token);
  const code = totpCode(factor.totp.secret);
  const c1 = await challenge(api, s.access_token, factor.id);
  const v1 = await verify(api, s.access_token, factor.id, c1.body.id, code);
  t.equal(v1.status, 200);
  const token = v1.body.access_token;
  const again = await verify(api, token, factor.id, c1.body.id, code);
  t.same(errorOf(again), { status: 422, error_code: 'mfa_ip_address_mismatch', msg: 'Challenge and verify IP addresses mismatch.' });
  const c2 = await challenge(api, token, factor.id);
  const replay = await verify(api, token, factor.id, c2.body.id, code);
  t.same(errorOf(replay), { status: 422, error_code: 'mfa_verification_failed', msg: 'Invalid TOTP code entered' });
  const previous = await verify(api, token, factor.id, c2.body.id, totpCode(factor.totp.secret, Date.now() - 30_000));
  t.equal(previous.status, 422, 'an older step than the one used is refused too');
});

t.test('challenges: expired, unknown, or of another factor', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token, 'x');
  const c = await challenge(api, s.access_token, factor.id);
  await api.db.query("update mfa_challenges set created_at = now() - interval '301 seconds' where id = $1", [c.body.id]);
  const expired = await verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret));
  t.same(errorOf(expired), {
    status: 422,
    error_code: 'mfa_challenge_expired',
    msg: `MFA challenge ${c.body.id} has expired, verify against another challenge or create a new challenge.`,
  });
  t.equal((await api.db.query('select 1 from mfa_challenges where id = $1', [c.body.id])).rowCount, 0, 'the expired challenge is deleted');
  const unknown = await verify(api, s.access_token, factor.id, '6f0c0e7a-1111-4222-8333-944455556666', totpCode(factor.totp.secret));
  t.same(errorOf(unknown), { status: 422, error_code: 'mfa_factor_not_found', msg: 'MFA factor with the provided challenge ID not found' });
  const other = await enrollTotp(api, s.access_token, 'y');
  const otherChallenge = await challenge(api, s.access_token, other.id);
  const crossed = await verify(api, s.access_token, factor.id, otherChallenge.body.id, totpCode(factor.totp.secret));
  t.equal(crossed.body.error_code, 'mfa_factor_not_found');
  const empty = await verify(api, s.access_token, factor.id, otherChallenge.body.id, '');
  t.same(errorOf(empty), { status: 400, error_code: 'validation_failed', msg: 'Code needs to be non-empty' });
});

t.test("factor ids: malformed, unknown, or another user's", async (t) => {
  const s = await signUp(api);
  const stranger = await signUp(api);
  const theirs = await enrollTotp(api, stranger.access_token);
  const malformed = await challenge(api, s.access_token, 'not-a-uuid');
  t.same(errorOf(malformed), { status: 404, error_code: 'validation_failed', msg: 'factor_id must be an UUID' });
  for (const [method, path] of [
    ['POST', `/factors/${theirs.id}/challenge`],
    ['POST', `/factors/${theirs.id}/verify`],
    ['DELETE', `/factors/${theirs.id}`],
  ]) {
    const res = await api.request(method, path, { token: s.access_token, body: { challenge_id: theirs.id, code: '123456' } });
    t.same(errorOf(res), { status: 404, error_code: 'mfa_factor_not_found', msg: 'Factor not found' }, `${method} ${path}`);
  }
  t.equal((await api.request('POST', '/factors', { body: { factor_type: 'totp' } })).body.error_code, 'no_authorization');
});

t.test('enrolment refusals: type, disabled types, names, limits, aal', async (t) => {
  const s = await signUp(api);
  const bad = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'sms' } });
  t.same(errorOf(bad), { status: 400, error_code: 'validation_failed', msg: 'factor_type needs to be totp, phone, or webauthn' });
  const phone = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'phone', phone: '+15551234567' } });
  t.same(errorOf(phone), { status: 422, error_code: 'mfa_phone_enroll_not_enabled', msg: 'MFA enroll is disabled for Phone' });
  const webauthn = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'webauthn' } });
  t.same(errorOf(webauthn), { status: 422, error_code: 'mfa_webauthn_enroll_not_enabled', msg: 'MFA enroll is disabled for WebAuthn' });
  await enrollTotp(api, s.access_token, 'one');
  const dup = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'one' } });
  t.same(errorOf(dup), {
    status: 422,
    error_code: 'mfa_factor_name_conflict',
    msg: 'A factor with the friendly name "one" for this user already exists',
  });
  await enrollTotp(api, s.access_token, 'two');
  await enrollTotp(api, s.access_token, 'three');
  const fourth = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'four' } });
  t.same(errorOf(fourth), {
    status: 422,
    error_code: 'too_many_enrolled_mfa_factors',
    msg: 'Maximum number of verified factors reached, unenroll to continue',
  });
  t.equal(
    (await api.db.query('select count(*)::int as n from mfa_factors where user_id = $1', [s.user.id])).rows[0].n,
    3,
    'nothing written',
  );
});

t.test('with a verified factor, an aal1 session may not enrol, unenrol it, or change the password', async (t) => {
  const email = uniqueEmail();
  const s = await signUp(api, email);
  const { factor, session } = await verifiedTotp(api, s.access_token, 'main');
  const aal1 = await signIn(api, email);
  t.equal(claimsOf(aal1.access_token).aal, 'aal1');
  t.equal((aal1.user as any).factors.length, 1, 'the sign-in answer lists the verified factor');
  const enrol = await api.request('POST', '/factors', { token: aal1.access_token, body: { factor_type: 'totp', friendly_name: 'second' } });
  t.same(errorOf(enrol), { status: 403, error_code: 'insufficient_aal', msg: 'AAL2 required to enroll a new factor' });
  const unenrol = await api.request('DELETE', `/factors/${factor.id}`, { token: aal1.access_token });
  t.same(errorOf(unenrol), { status: 422, error_code: 'insufficient_aal', msg: 'AAL2 required to unenroll verified factor' });
  const password = await api.request('PUT', '/user', { token: aal1.access_token, body: { password: 'Another-password-2' } });
  t.same(errorOf(password), {
    status: 401,
    error_code: 'insufficient_aal',
    msg: 'AAL2 session is required to update email or password when MFA is enabled.',
  });
  const email2 = await api.request('PUT', '/user', { token: aal1.access_token, body: { email: uniqueEmail() } });
  t.equal(email2.body.error_code, 'insufficient_aal');
  const metadata = await api.request('PUT', '/user', { token: aal1.access_token, body: { data: { a: 1 } } });
  t.equal(metadata.status, 200, 'metadata needs no aal2');
  // From the aal2 session all of it is allowed.
  t.equal(
    (await api.request('POST', '/factors', { token: session.access_token, body: { factor_type: 'totp', friendly_name: 'second' } })).status,
    200,
  );
  t.equal((await api.request('PUT', '/user', { token: session.access_token, body: { password: 'Another-password-2' } })).status, 200);
});

t.test('unenrolling at aal2 removes the factor and returns the session to aal1', async (t) => {
  const s = await signUp(api);
  const { factor, session } = await verifiedTotp(api, s.access_token);
  const res = await api.request('DELETE', `/factors/${factor.id}`, { token: session.access_token });
  t.equal(res.status, 200);
  t.same(res.body, { id: factor.id });
  const r = await refresh(api, session.refresh_token);
  t.equal(r.status, 200);
  t.equal(claimsOf(r.body.access_token).aal, 'aal1');
  t.same(
    claimsOf(r.body.access_token).amr.map((a: any) => a.method),
    ['password'],
  );
  t.notOk('factors' in r.body.user);
  const { rows } = await api.db.query('select aal, factor_id from sessions where id = $1', [claimsOf(session.access_token).session_id]);
  t.same(rows[0], { aal: 'aal1', factor_id: null });
  // An unverified factor may be removed from an aal1 session.
  const fresh = await signUp(api);
  const unverified = await enrollTotp(api, fresh.access_token);
  t.equal((await api.request('DELETE', `/factors/${unverified.id}`, { token: fresh.access_token })).status, 200);
});

t.test('stale unverified factors without challenges are deleted at the next enrolment', async (t) => {
  const s = await signUp(api);
  const stale = await enrollTotp(api, s.access_token, 'stale');
  const challenged = await enrollTotp(api, s.access_token, 'challenged');
  await challenge(api, s.access_token, challenged.id);
  await api.db.query("update mfa_factors set created_at = now() - interval '10 minutes' where id = any($1)", [[stale.id, challenged.id]]);
  await enrollTotp(api, s.access_token, 'new');
  const ids = (await api.db.query('select id from mfa_factors where user_id = $1', [s.user.id])).rows.map((r) => r.id);
  t.notOk(ids.includes(stale.id), 'the stale factor is gone');
  t.ok(ids.includes(challenged.id), 'a challenged factor stays');
});

t.test('a user deleted while the enrolment waits for its row: 403 user_not_found, not a 500', async (t) => {
  const s = await signUp(api, uniqueEmail('deleted-at-enrol'));
  const res = await behindDeletion(api, s.user.id, false, () =>
    api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'late' } }),
  );
  t.strictSame(
    [res.status, res.body],
    [403, { code: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' }],
  );
});

t.test('a user deleted while a verification waits for its row: 403 user_not_found, and the deletion 200, never a deadlock', async (t) => {
  const s = await signUp(api, uniqueEmail('deleted-at-verify'));
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  const res = await behindDeletion(api, s.user.id, false, () =>
    verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret)),
  );
  t.strictSame(
    [res.status, res.body],
    [403, { code: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' }],
  );
});

t.test('anonymous users may not use MFA', async (t) => {
  const anon = await api.request('POST', '/signup', { body: {} });
  t.equal(anon.status, 200);
  const res = await api.request('POST', '/factors', { token: anon.body.access_token, body: { factor_type: 'totp' } });
  t.same(errorOf(res), { status: 403, error_code: 'no_authorization', msg: 'Anonymous user not allowed to perform these actions' });
});

t.test('switched off: MFA_TOTP_ENROLL_ENABLED and MFA_TOTP_VERIFY_ENABLED', async (t) => {
  const off = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_MFA_TOTP_VERIFY_ENABLED: 'false' });
  t.teardown(() => off.stop());
  const s = await signUp(off);
  const factor = await enrollTotp(off, s.access_token);
  const c = await challenge(off, s.access_token, factor.id);
  t.same(errorOf(c), { status: 422, error_code: 'mfa_totp_verify_not_enabled', msg: 'MFA verification is disabled for TOTP' });
  const v = await verify(off, s.access_token, factor.id, factor.id, '123456');
  t.equal(v.body.error_code, 'mfa_totp_verify_not_enabled');
  const offEnroll = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_MFA_TOTP_ENROLL_ENABLED: 'false' });
  t.teardown(() => offEnroll.stop());
  const u = await signUp(offEnroll);
  const e = await offEnroll.request('POST', '/factors', { token: u.access_token, body: { factor_type: 'totp' } });
  t.same(errorOf(e), { status: 422, error_code: 'mfa_totp_enroll_not_enabled', msg: 'MFA enroll is disabled for TOTP' });
});

t.test('challenge and verify each have a per-client bucket (MFA_RATE_LIMIT_CHALLENGE_AND_VERIFY), as the original', async (t) => {
  const limited = await startTestService({
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_RATE_LIMIT_HEADER: 'X-Client',
  });
  t.teardown(() => limited.stop());
  const s = await signUp(limited);
  const headers = { 'x-client': '203.0.113.7' };
  const enrolled = await limited.request('POST', '/factors', { token: s.access_token, headers, body: { factor_type: 'totp' } });
  t.equal(enrolled.status, 200, 'enrolment is not in a bucket');
  const challenge = () => limited.request('POST', `/factors/${enrolled.body.id}/challenge`, { token: s.access_token, headers, body: {} });
  // A burst of 30, then the challenge bucket is spent.
  for (let i = 0; i < 30; i++) {
    const res = await challenge();
    if (res.status !== 200) t.fail(`challenge ${i}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  t.same(errorOf(await challenge()), { status: 429, error_code: 'over_request_rate_limit', msg: 'Request rate limit reached' });
  // The verify bucket is another one: a wrong code is refused for being wrong, not for the rate.
  const { body: last } = await limited.request('POST', `/factors/${enrolled.body.id}/challenge`, { token: s.access_token, body: {} });
  const verify = await limited.request('POST', `/factors/${enrolled.body.id}/verify`, {
    token: s.access_token,
    headers,
    body: { challenge_id: last.id, code: '000000' },
  });
  t.equal(verify.body.error_code, 'mfa_verification_failed', `verify: ${verify.status} ${verify.body.error_code}`);
  t.equal(
    (await limited.request('POST', `/factors/${enrolled.body.id}/challenge`, { token: s.access_token, body: {} })).status,
    200,
    'no key, no limit',
  );
});

t.test('a verification and an unenrolment of one factor at once never deadlock: each answers, no 500', async (t) => {
  // Unenrolment once deleted the factor (and, by cascade, its challenges) before the sessions, while a
  // verification marks the challenge before it writes the factor: each held what the other wanted, and
  // PostgreSQL ended one of them (a 500). Both now take the user's row first. Several rounds, since the
  // overlap is a matter of timing; before the fix a few of 80 rounds deadlocked here.
  const answers = new Set<string>();
  for (let i = 0; i < 80; i++) {
    const s = await signUp(api);
    const factor = await enrollTotp(api, s.access_token);
    const c = await challenge(api, s.access_token, factor.id);
    const [verified, removed] = await Promise.all([
      verify(api, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret)),
      api.request('DELETE', `/factors/${factor.id}`, { token: s.access_token }),
    ]);
    for (const [name, res] of [
      ['verify', verified],
      ['unenroll', removed],
    ] as const) {
      if (res.status >= 500) t.fail(`round ${i}: ${name} → ${res.status} ${res.text.slice(0, 200)}`);
      answers.add(`${name} ${res.status}`);
    }
  }
  t.ok(answers.has('unenroll 200'), `answers seen: ${[...answers].sort().join(', ')}`);
});

t.test('malformed bodies are clear 4xx answers, never 500', async (t) => {
  const mistyped = (kind: string, field: string, type: string) =>
    `Could not parse request body as JSON: json: cannot unmarshal ${kind} into Go struct field ${field} of type ${type}`;
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token, 'bodies');
  const cases: Array<[string, string, unknown, number, string]> = [
    // A member of the wrong JSON type fails the body's decoding, as the original's decoder words it.
    ['POST', '/factors', { factor_type: 7 }, 400, mistyped('number', 'EnrollFactorParams.factor_type', 'string')],
    ['POST', '/factors', { factor_type: 'totp', friendly_name: 5 }, 400, mistyped('number', 'EnrollFactorParams.friendly_name', 'string')],
    ['POST', '/factors', { factor_type: 'totp', issuer: {} }, 400, mistyped('object', 'EnrollFactorParams.issuer', 'string')],
    ['POST', `/factors/${factor.id}/verify`, { challenge_id: 'nope', code: '123456' }, 400, BAD_UUID('nope')],
    [
      'POST',
      `/factors/${factor.id}/verify`,
      { challenge_id: factor.id, code: 123456 },
      400,
      mistyped('number', 'VerifyFactorParams.code', 'string'),
    ],
    [
      'POST',
      `/factors/${factor.id}/verify`,
      { challenge_id: 7, code: '123456' },
      400,
      mistyped('number', 'VerifyFactorParams.challenge_id', 'uuid.UUID'),
    ],
    [
      'POST',
      `/factors/${factor.id}/verify`,
      { challenge_id: factor.id, webauthn: 'x' },
      400,
      mistyped('string', 'VerifyFactorParams.webauthn', 'api.WebAuthnParams'),
    ],
    [
      'POST',
      `/factors/${factor.id}/verify`,
      { challenge_id: factor.id, webauthn: { Type: 5 } },
      400,
      mistyped('number', 'WebAuthnParams.webauthn.type', 'string'),
    ],
    ['POST', `/factors/${factor.id}/verify`, { code: '123456' }, 422, 'MFA factor with the provided challenge ID not found'],
  ];
  for (const [method, path, body, status, msg] of cases) {
    const res = await api.request(method, path, { token: s.access_token, body });
    t.same([res.status, res.body?.msg], [status, msg], `${JSON.stringify(body)}`);
  }
  const notObject = await api.request('POST', '/factors', {
    token: s.access_token,
    raw: '[1]',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(notObject.status, 400);
  for (const raw of ['[1]', '{"truncated', '"text"']) {
    const res = await api.request('POST', `/factors/${factor.id}/challenge`, {
      token: s.access_token,
      raw,
      headers: { 'content-type': 'application/json' },
    });
    t.equal(res.status, 200, `a TOTP challenge never reads its body (${raw}), as the original`);
  }
});

t.test("a TOTP enrolment's audit entry names the factor alone, as the original's", async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token, 'audited');
  const { rows } = await api.db.query(
    `select payload->'traits' as traits from audit_log_entries where payload->>'action' = 'factor_in_progress' and payload->>'actor_id' = $1`,
    [s.user.id],
  );
  t.same(rows, [{ traits: { factor_id: factor.id } }]);
});

const BAD_UUID = (id: string) => `Could not parse request body as JSON: uuid: incorrect UUID length ${id.length} in string "${id}"`;

t.test('verify: a challenge_id that is not a UUID fails the body, before the code and the switches, as the original', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token, 'uuid-first');
  const verifyWith = (body: unknown) => api.request('POST', `/factors/${factor.id}/verify`, { token: s.access_token, body });
  for (const body of [{ challenge_id: '', code: '123456' }, { challenge_id: '', code: '' }, { challenge_id: 'nope' }]) {
    const res = await verifyWith(body);
    t.same(errorOf(res), { status: 400, error_code: 'bad_json', msg: BAD_UUID(body.challenge_id) }, JSON.stringify(body));
  }
  const format = await verifyWith({ challenge_id: `${factor.id.slice(0, 35)}g`, code: '123456' });
  t.same(errorOf(format), {
    status: 400,
    error_code: 'bad_json',
    msg: "Could not parse request body as JSON: encoding/hex: invalid byte: U+0067 'g'",
  });
  // The other forms the original's UUID type reads name the same challenge.
  const c = await api.request('POST', `/factors/${factor.id}/challenge`, { token: s.access_token, body: {} });
  const braced = await verifyWith({ challenge_id: `{${c.body.id.toUpperCase()}}`, code: '' });
  t.same(errorOf(braced), { status: 400, error_code: 'validation_failed', msg: 'Code needs to be non-empty' });
  const bare = await verifyWith({ challenge_id: c.body.id.replaceAll('-', ''), code: totpCode(factor.totp.secret) });
  t.equal(bare.status, 200, 'the challenge found by its bare hex digits');
});

t.test('an issuer too long for the QR code and a friendly_name too long for its index: 400, not a 500', async (t) => {
  const s = await signUp(api);
  const enroll = (body: Record<string, unknown>) =>
    api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', ...body } });
  t.equal((await enroll({ issuer: 'i'.repeat(300), friendly_name: 'long issuer' })).status, 200, 'a 300-byte issuer fits');
  for (const issuer of ['i'.repeat(1000), '€'.repeat(100)]) {
    t.same(errorOf(await enroll({ issuer })), {
      status: 400,
      error_code: 'validation_failed',
      msg: 'issuer is too long: the TOTP URI does not fit in a QR code',
    });
  }
  // Random text, which the index cannot compress: 2,000 bytes fit, more are refused before the insert.
  const random = (bytes: number) =>
    crypto.getRandomValues(new Uint8Array(bytes / 2)).reduce((s, b) => s + b.toString(16).padStart(2, '0'), '');
  const fits = await enroll({ friendly_name: random(2000) });
  t.equal(fits.status, 200, 'a 2,000-byte name');
  const tooLong = { status: 400, error_code: 'validation_failed', msg: 'friendly_name must be 2000 bytes or less' };
  t.same(errorOf(await enroll({ friendly_name: random(4000) })), tooLong);
  const admin = await adminToken();
  const renamed = await api.request('PUT', `/admin/users/${s.user.id}/factors/${fits.body.id}`, {
    token: admin,
    body: { friendly_name: random(4000) },
  });
  t.same(errorOf(renamed), tooLong, 'the admin rename');
  t.equal(
    (await api.db.query('select count(*)::int as n from mfa_factors where user_id = $1', [s.user.id])).rows[0].n,
    2,
    'nothing else written',
  );
});

/** The 422 of a name another factor of the user has, as the admin rename words it. */
const adminNameConflict = (name: string) => ({
  status: 422,
  error_code: 'mfa_factor_name_conflict',
  msg: `A factor with the friendly name "${name}" for this user already exists`,
});

t.test("admin renames of two factors to one name at once: one renames, the other the check's 422, not a 500", async (t) => {
  const s = await signUp(api);
  const first = await enrollTotp(api, s.access_token, 'first');
  const second = await enrollTotp(api, s.access_token, 'second');
  const admin = await adminToken();
  const rename = (id: string) => () =>
    api.request('PUT', `/admin/users/${s.user.id}/factors/${id}`, { token: admin, body: { friendly_name: 'same' } });
  // The test holds both factors' rows until both renames are under way, each past its own look-ups.
  const held = await holdLock(api.db, 'select 1 from mfa_factors where id = any($1::uuid[]) for update', [[first.id, second.id]]);
  const replies = await inOrderBehind(held, [rename(first.id), rename(second.id)]);
  const answers = replies.map(errorOf).sort((a, b) => a.status - b.status);
  t.strictSame(answers, [{ status: 200, error_code: undefined, msg: undefined }, adminNameConflict('same')]);
  const { rows } = await api.db.query("select count(*)::int as n from mfa_factors where user_id = $1 and friendly_name = 'same'", [
    s.user.id,
  ]);
  t.equal(rows[0].n, 1, 'one factor has the name');
});

t.test('an enrolment beside an admin rename to its name: one has the name, the other the 422, not a 500', async (t) => {
  const s = await signUp(api);
  const factor = await enrollTotp(api, s.access_token, 'old');
  // The rename is under way (past its look-ups, at the factor's row the test holds) before the enrolment starts.
  const held = await holdLock(api.db, 'select 1 from mfa_factors where id = $1 for update', [factor.id]);
  const enrolment = { settled: false };
  let renamed: Promise<Reply> | undefined;
  let enrolled: Promise<Reply> | undefined;
  try {
    renamed = api.request('PUT', `/admin/users/${s.user.id}/factors/${factor.id}`, {
      token: await adminToken(),
      body: { friendly_name: 'new' },
    });
    await held.waiters(1);
    enrolled = api
      .request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'new' } })
      .finally(() => (enrolment.settled = true));
    // The enrolment waits behind the rename for the user's row, or (were the rename not to take it) finishes first.
    await held.waiters(2, enrolment);
  } finally {
    await held.release();
  }
  const [rename, enrol] = [await renamed, await enrolled];
  const answers = [rename.status, enrol.status].sort();
  t.strictSame(answers, [200, 422], `rename ${rename.status}, enrolment ${enrol.status}`);
  const refused = rename.status === 422 ? rename : enrol;
  t.equal(refused.body.error_code, 'mfa_factor_name_conflict');
  const { rows } = await api.db.query("select count(*)::int as n from mfa_factors where user_id = $1 and friendly_name = 'new'", [
    s.user.id,
  ]);
  t.equal(rows[0].n, 1, 'one factor has the name');
});
