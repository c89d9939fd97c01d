// MFA through the official @supabase/auth-js client, as an app uses it: mfa.enroll / challenge / verify /
// challengeAndVerify / unenroll / listFactors / getAuthenticatorAssuranceLevel and admin.mfa.listFactors /
// deleteFactor. The second half ports the behaviour of the client's own MFA integration tests (auth-js
// 2.109, test/GoTrueClient.test.ts, "MFA") so they hold against this service.
import t from 'tap';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { SignJWT } from 'jose';
import { startTestService, JWT_SECRET, type TestService } from './helpers/server.js';
import { authClient } from './helpers/auth-client.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { claimsOf, totpCode } from './helpers/mfa.js';

let api: TestService;
let admin: GoTrueAdminApi;
t.before(async () => {
  api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  admin = new GoTrueAdminApi({ url: api.url, headers: { Authorization: `Bearer ${await adminToken('service_role')}` } });
});
t.teardown(() => api.stop());

const PASSWORD = 'Secret-password-1';

/** A signed-up, signed-in client (autoconfirm), as the official tests' setupUserWithMFA. */
async function signedInClient(email = uniqueEmail()) {
  const client = authClient(api.url);
  const { data, error } = await client.signUp({ email, password: PASSWORD });
  if (error || !data.session) throw new Error(`signUp failed: ${error?.message}`);
  await client.initialize();
  const signedIn = await client.signInWithPassword({ email, password: PASSWORD });
  if (signedIn.error) throw signedIn.error;
  return { client, email, userId: data.user!.id };
}

t.test('enroll, challenge, verify: the client stores the aal2 session; listFactors and the AAL follow', async (t) => {
  const { client } = await signedInClient();
  const enrolled = await client.mfa.enroll({ factorType: 'totp', friendlyName: 'Authenticator' });
  t.equal(enrolled.error, null);
  const factor = enrolled.data!;
  t.equal(factor.type, 'totp');
  t.equal(factor.friendly_name, 'Authenticator');
  t.match(factor.totp.qr_code, /^data:image\/svg\+xml;utf-8,<svg/, 'the client turns the SVG into a data URI');
  // What a browser shows of that URI in an <img>: the body after the comma, up to a fragment's '#'.
  const image = new URL(factor.totp.qr_code);
  t.equal(image.hash, '', 'no # in the SVG: a browser would cut the image there and show it broken');
  const body = decodeURIComponent(image.href.slice(image.href.indexOf(',') + 1));
  t.match(body, /^<svg width="(\d+)" height="\1" [^>]*viewBox="0 0 (\d+) \2"[\s\S]*<\/svg>$/, 'a whole SVG, with its size');
  t.match(factor.totp.uri, /^otpauth:\/\/totp\//);

  let aal = await client.mfa.getAuthenticatorAssuranceLevel();
  t.same(aal.data, { currentLevel: 'aal1', nextLevel: 'aal1', currentAuthenticationMethods: aal.data!.currentAuthenticationMethods });
  let factors = await client.mfa.listFactors();
  t.equal(factors.data!.all.length, 1);
  t.equal(factors.data!.totp.length, 0, 'unverified factors are listed only under all');

  const challenged = await client.mfa.challenge({ factorId: factor.id });
  t.equal(challenged.error, null);
  const verified = await client.mfa.verify({ factorId: factor.id, challengeId: challenged.data!.id, code: totpCode(factor.totp.secret) });
  t.equal(verified.error, null);
  t.equal(claimsOf(verified.data!.access_token).aal, 'aal2');

  const { data: session } = await client.getSession();
  t.equal(session.session!.access_token, verified.data!.access_token, 'the client saved the upgraded session');
  aal = await client.mfa.getAuthenticatorAssuranceLevel();
  t.equal(aal.data!.currentLevel, 'aal2');
  t.equal(aal.data!.nextLevel, 'aal2');
  t.equal((aal.data!.currentAuthenticationMethods[0] as { method: string }).method, 'totp');
  factors = await client.mfa.listFactors();
  t.same(
    factors.data!.totp.map((f) => f.id),
    [factor.id],
  );
  // The refreshed session keeps aal2.
  const refreshed = await client.refreshSession();
  t.equal(refreshed.error, null);
  t.equal(claimsOf(refreshed.data.session!.access_token).aal, 'aal2');
});

t.test('a later sign-in is aal1 with nextLevel aal2 until challengeAndVerify', async (t) => {
  const { client, email } = await signedInClient();
  const factor = (await client.mfa.enroll({ factorType: 'totp' })).data!;
  const code = totpCode(factor.totp.secret);
  const first = await client.mfa.challengeAndVerify({ factorId: factor.id, code });
  t.equal(first.error, null);

  const other = authClient(api.url);
  t.equal((await other.signInWithPassword({ email, password: PASSWORD })).error, null);
  const aal = await other.mfa.getAuthenticatorAssuranceLevel();
  t.equal(aal.data!.currentLevel, 'aal1');
  t.equal(aal.data!.nextLevel, 'aal2', 'the sign-in answer lists the verified factor');
  // Codes are single-use: the one just accepted is refused, the next time step's code is accepted.
  const used = await other.mfa.challengeAndVerify({ factorId: factor.id, code });
  t.equal((used.error as any)?.code, 'mfa_verification_failed');
  const next = await other.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret, Date.now() + 30_000) });
  t.equal(next.error, null);
  t.equal((await other.mfa.getAuthenticatorAssuranceLevel()).data!.currentLevel, 'aal2');
});

t.test('unenroll needs aal2 for a verified factor; afterwards the factor is gone', async (t) => {
  const { client, email } = await signedInClient();
  const factor = (await client.mfa.enroll({ factorType: 'totp' })).data!;
  t.equal((await client.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret) })).error, null);
  const aal1 = authClient(api.url);
  await aal1.signInWithPassword({ email, password: PASSWORD });
  const refused = await aal1.mfa.unenroll({ factorId: factor.id });
  t.equal((refused.error as any)?.code, 'insufficient_aal');
  t.equal(refused.error?.status, 422);
  const removed = await client.mfa.unenroll({ factorId: factor.id });
  t.equal(removed.error, null);
  t.same(removed.data, { id: factor.id });
  t.equal((await client.mfa.listFactors()).data!.all.length, 0);
});

t.test('admin.mfa.listFactors and deleteFactor', async (t) => {
  const { client, userId } = await signedInClient();
  const factor = (await client.mfa.enroll({ factorType: 'totp', friendlyName: 'admin sees me' })).data!;
  t.equal((await client.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret) })).error, null);
  const listed = await admin.mfa.listFactors({ userId });
  t.equal(listed.error, null);
  t.equal(listed.data!.factors.length, 1);
  t.match(listed.data!.factors[0], { id: factor.id, factor_type: 'totp', status: 'verified', friendly_name: 'admin sees me' });
  const deleted = await admin.mfa.deleteFactor({ userId, id: factor.id });
  t.equal(deleted.error, null);
  // auth-js hands the answer body back wrapped (its _request result): the deleted factor.
  t.equal((deleted.data as any).data?.id ?? (deleted.data as any).id, factor.id);
  t.same((await admin.mfa.listFactors({ userId })).data!.factors, []);
  // Audited under the factor's owner, as the original does, with the traits naming both.
  const { rows: audit } = await api.db.query(
    `select payload from audit_log_entries where payload->>'action' = 'factor_deleted' and payload->'traits'->>'factor_id' = $1`,
    [factor.id],
  );
  t.equal(audit.length, 1);
  t.match(audit[0].payload, { actor_id: userId, traits: { user_id: userId, factor_id: factor.id } });
  // The user's upgraded session is back at aal1 after its next refresh.
  const refreshed = await client.refreshSession();
  t.equal(claimsOf(refreshed.data.session!.access_token).aal, 'aal1');
  const unknown = await admin.mfa.deleteFactor({ userId, id: factor.id });
  t.equal((unknown.error as any)?.code, 'mfa_factor_not_found');
  const updated = await api.request('PUT', `/admin/users/${userId}/factors/${factor.id}`, {
    token: await adminToken(),
    body: { friendly_name: 'x' },
  });
  t.equal(updated.status, 404);
});

t.test('admin renames a factor with PUT', async (t) => {
  const { client, userId } = await signedInClient();
  const factor = (await client.mfa.enroll({ factorType: 'totp', friendlyName: 'old' })).data!;
  const res = await api.request('PUT', `/admin/users/${userId}/factors/${factor.id}`, {
    token: await adminToken(),
    body: { friendly_name: 'new' },
  });
  t.equal(res.status, 200);
  t.match(res.body, { id: factor.id, friendly_name: 'new', factor_type: 'totp' });
  await client.mfa.enroll({ factorType: 'totp', friendlyName: 'taken' });
  const conflict = await api.request('PUT', `/admin/users/${userId}/factors/${factor.id}`, {
    token: await adminToken(),
    body: { friendly_name: 'taken' },
  });
  t.equal(conflict.status, 422);
  t.equal(conflict.body.error_code, 'mfa_factor_name_conflict');
  const user = await admin.getUserById(userId);
  t.equal((user.data.user as any).factors[0].friendly_name, 'new', 'the admin user JSON lists factors too');
});

// ---- The official client's MFA integration tests (behaviour ported; auth-js 2.109) ----

t.test('official: enroll({factorType: "totp"}) returns totp', async (t) => {
  const { client } = await signedInClient();
  const { data, error } = await client.mfa.enroll({ factorType: 'totp' });
  t.equal(error, null);
  t.ok(data!.totp.qr_code);
});

t.test('official: enroll({factorType: "totp"}) should fail without session', async (t) => {
  const { client } = await signedInClient();
  await client.signOut();
  const { data, error } = await client.mfa.enroll({ factorType: 'totp' });
  t.not(error, null);
  t.match(error!.message, /Bearer token/);
  t.equal(data, null);
});

t.test('official: challenge should create MFA challenge', async (t) => {
  const { client } = await signedInClient();
  const factorId = (await client.mfa.enroll({ factorType: 'totp' })).data!.id;
  const { data, error } = await client.mfa.challenge({ factorId });
  t.equal(error, null);
  t.ok(data!.id);
  t.ok(data!.expires_at);
});

t.test('official: verify and challengeAndVerify with a wrong code fail with "Invalid TOTP code"', async (t) => {
  const { client } = await signedInClient();
  const enrolled = (await client.mfa.enroll({ factorType: 'totp' })).data!;
  const wrong = totpCode(enrolled.totp.secret) === '123456' ? '654321' : '123456';
  const challengeData = (await client.mfa.challenge({ factorId: enrolled.id })).data!;
  const verified = await client.mfa.verify({ factorId: enrolled.id, challengeId: challengeData.id, code: wrong });
  t.not(verified.error, null);
  t.match(verified.error!.message, /Invalid TOTP code/);
  t.equal(verified.data, null);
  const both = await client.mfa.challengeAndVerify({ factorId: enrolled.id, code: wrong });
  t.match(both.error!.message, /Invalid TOTP code/);
  t.equal(both.data, null);
});

t.test('official: unenroll should remove MFA factor', async (t) => {
  const { client } = await signedInClient();
  const factorId = (await client.mfa.enroll({ factorType: 'totp' })).data!.id;
  t.equal((await client.mfa.unenroll({ factorId })).error, null);
  const { data } = await client.mfa.listFactors();
  t.equal(data!.all.length, 0);
  t.equal(data!.totp.length, 0);
});

t.test('official: getAuthenticatorAssuranceLevel should return current AAL', async (t) => {
  const { client } = await signedInClient();
  await client.mfa.enroll({ factorType: 'totp' });
  const { data, error } = await client.mfa.getAuthenticatorAssuranceLevel();
  t.equal(error, null);
  t.equal(data!.currentLevel, 'aal1');
  t.equal(data!.nextLevel, 'aal1');
  t.ok(Array.isArray(data!.currentAuthenticationMethods));
});

t.test('official: getAuthenticatorAssuranceLevel(jwt): aal1 without verified factors, aal2 next with one', async (t) => {
  const { client, userId } = await signedInClient();
  const token = (await client.getSession()).data.session!.access_token;
  let { data, error } = await client.mfa.getAuthenticatorAssuranceLevel(token);
  t.equal(error, null);
  t.equal(data!.currentLevel, 'aal1');
  t.equal(data!.nextLevel, 'aal1');
  t.equal(data!.currentAuthenticationMethods.length, 1);
  const factor = (await client.mfa.enroll({ factorType: 'totp' })).data!;
  await client.mfa.challengeAndVerify({ factorId: factor.id, code: totpCode(factor.totp.secret) });
  const aal1 = authClient(api.url);
  const { data: signedIn } = await aal1.signInWithPassword({
    email: (await admin.getUserById(userId)).data.user!.email!,
    password: PASSWORD,
  });
  ({ data, error } = await client.mfa.getAuthenticatorAssuranceLevel(signedIn.session!.access_token));
  t.equal(error, null);
  t.equal(data!.currentLevel, 'aal1');
  t.equal(data!.nextLevel, 'aal2');
});

t.test('official: getAuthenticatorAssuranceLevel with an invalid or foreign JWT returns an error', async (t) => {
  const client = authClient(api.url);
  const invalid = await client.mfa.getAuthenticatorAssuranceLevel('invalid-jwt-token');
  t.not(invalid.error, null);
  t.match(invalid.error!.message, /Invalid JWT/);
  t.equal(invalid.data, null);
  const stranger = await new SignJWT({
    sub: '00000000-0000-4000-8000-000000000001',
    aud: 'authenticated',
    aal: 'aal1',
    amr: [],
    session_id: '00000000-0000-4000-8000-000000000002',
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(new TextEncoder().encode(JWT_SECRET));
  const unknown = await client.mfa.getAuthenticatorAssuranceLevel(stranger);
  t.not(unknown.error, null, 'getUser fails for a user that does not exist');
  t.equal(unknown.data, null);
});

t.test('official: MFA calls without a session fail', async (t) => {
  const client = authClient(api.url);
  await client.signOut();
  const enroll = await client.mfa.enroll({ factorType: 'totp' });
  t.ok(enroll.error);
  t.equal((enroll.data as any)?.id, undefined);
  const challenged = await client.mfa.challenge({ factorId: 'test-factor-id' });
  t.ok(challenged.error);
  t.equal((challenged.data as any)?.id, undefined);
  const verified = await client.mfa.verify({
    factorId: 'test-factor-id',
    challengeId: 'f7850041-ba10-4eb3-851c-8ceb7ff8463d',
    code: '123456',
  });
  t.ok(verified.error);
  t.equal((verified.data as any)?.access_token, undefined);
  const unenrolled = await client.mfa.unenroll({ factorId: 'test-factor-id' });
  t.ok(unenrolled.error);
  t.equal((unenrolled.data as any)?.id, undefined);
});
