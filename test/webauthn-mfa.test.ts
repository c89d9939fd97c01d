// WebAuthn as a second factor (docs/passkeys.md#webauthn-as-a-second-factor), through the MFA endpoints
// with the software authenticator: enrol, "create" ceremony to verify the factor (aal2), "request"
// ceremonies on later sessions, answerable by any of the user's verified WebAuthn factors; a replayed
// assertion, a wrong origin and a wrong rp id refused (a cloned counter is not, as in the original); and
// passkey management needing aal2 once a factor is verified.
import t from 'tap';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { signIn, signUp } from './helpers/accounts.js';
import { PASSKEY_ENV, newAuthenticator, register } from './helpers/passkeys.js';
import type { SoftwareAuthenticator, Tamper } from './helpers/authenticator.js';
import { withBrowserWebAuthn } from './helpers/browser-webauthn.js';
import { authClient } from './helpers/auth-client.js';
import { uniqueEmail } from './helpers/accounts.js';

const api = await startTestService({
  ...PASSKEY_ENV,
  AUTH_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true',
  AUTH_MFA_WEB_AUTHN_VERIFY_ENABLED: 'true',
  // A hook that would refuse every attempt it is shown: as in the original, WebAuthn verifications never are.
  AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_ENABLED: 'true',
  AUTH_HOOK_MFA_VERIFICATION_ATTEMPT_URI: 'pg-functions://postgres/webauthn_hook_test/attempt',
});
t.teardown(() => api.stop());
await api.db.query(`
  create schema webauthn_hook_test;
  create table webauthn_hook_test.events (event jsonb not null);
  create function webauthn_hook_test.attempt(event jsonb) returns jsonb language plpgsql as $$
  begin
    insert into webauthn_hook_test.events values (event);
    return jsonb_build_object('decision', 'reject', 'message', 'No');
  end $$;
`);

const FAILED = { code: 422, error_code: 'mfa_verification_failed', msg: 'WebAuthn credential verification failed' };
const methods = (token: string) => (decodeJwt(token).amr as Array<{ method: string }>).map((a) => a.method);

async function challenge(token: string, factorId: string) {
  const res = await api.request('POST', `/factors/${factorId}/challenge`, { token, body: {} });
  if (res.status !== 200) throw new Error(`challenge: ${res.status} ${res.text}`);
  return res.body;
}

const verify = (token: string, factorId: string, challengeId: string, type: string, credential_response: unknown) =>
  api.request('POST', `/factors/${factorId}/verify`, {
    token,
    body: { challenge_id: challengeId, webauthn: { type, credential_response } },
  });

/** A user with a verified webauthn factor on `authenticator`; returns the aal2 token response too. */
async function userWithFactor(authenticator: SoftwareAuthenticator) {
  const session = await signUp(api);
  const enrolled = await api.request('POST', '/factors', {
    token: session.access_token,
    body: { factor_type: 'webauthn', friendly_name: 'key' },
  });
  if (enrolled.status !== 200) throw new Error(enrolled.text);
  const created = await challenge(session.access_token, enrolled.body.id);
  const verified = await verify(
    session.access_token,
    enrolled.body.id,
    created.id,
    'create',
    authenticator.create(created.webauthn.credential_options.publicKey),
  );
  if (verified.status !== 200) throw new Error(verified.text);
  return { session, factorId: enrolled.body.id as string, aal2: verified.body };
}

/** A fresh aal1 session of the user, and a "request" ceremony's assertion from `authenticator`. */
async function assertOnNewSession(email: string, factorId: string, authenticator: SoftwareAuthenticator, tamper?: Tamper) {
  const session = await signIn(api, email);
  const requested = await challenge(session.access_token, factorId);
  const assertion = authenticator.get(requested.webauthn.credential_options.publicKey, tamper);
  return { session, requested, assertion };
}

t.test('enrol, verify with a new credential ("create"), then step up later sessions ("request")', async (t) => {
  const session = await signUp(api);
  const enrolled = await api.request('POST', '/factors', {
    token: session.access_token,
    body: { factor_type: 'webauthn', friendly_name: 'key' },
  });
  t.equal(enrolled.status, 200);
  t.same(enrolled.body, { id: enrolled.body.id, type: 'webauthn', friendly_name: 'key' });

  const created = await challenge(session.access_token, enrolled.body.id);
  t.equal(created.type, 'webauthn');
  t.equal(created.webauthn.type, 'create');
  const publicKey = created.webauthn.credential_options.publicKey;
  t.equal(publicKey.rp.id, 'localhost');
  t.equal(Buffer.from(publicKey.user.id, 'base64url').toString(), session.user.id);
  t.equal(
    publicKey.authenticatorSelection?.residentKey ?? 'discouraged',
    'discouraged',
    'a second factor does not ask for a passkey (a slot and a PIN on a security key), as the original',
  );
  const authenticator = newAuthenticator();
  const verified = await verify(session.access_token, enrolled.body.id, created.id, 'create', authenticator.create(publicKey));
  t.equal(verified.status, 200, verified.text);
  t.equal(decodeJwt(verified.body.access_token).aal, 'aal2');
  t.ok(methods(verified.body.access_token).includes('mfa/webauthn'));
  const factor = await api.db.query('select status, web_authn_credential, web_authn_aaguid from mfa_factors where id = $1', [
    enrolled.body.id,
  ]);
  t.equal(factor.rows[0].status, 'verified');
  t.equal(factor.rows[0].web_authn_credential.credential_id, authenticator.credentialId);
  const ZERO_AAGUID = '00000000-0000-0000-0000-000000000000';
  t.equal(factor.rows[0].web_authn_aaguid, ZERO_AAGUID, '"none" attestation\'s all-zero AAGUID, stored as the original stores it');
  const me = await api.request('GET', '/user', { token: verified.body.access_token });
  t.equal(me.body.factors[0].web_authn_aaguid, ZERO_AAGUID, 'and shown');
  const last = me.body.factors[0].last_webauthn_challenge_data;
  t.equal(last.type, 'create', 'the last ceremony, as the original shows it');
  t.match(last.challenge, { challenge_id: created.id, factor_id: enrolled.body.id, ip_address: '127.0.0.1' });
  t.ok(last.challenge.created_at && last.challenge.web_authn_session_data);
  t.equal(last.credential_response.id, authenticator.credentialId);

  const { session: later, requested, assertion } = await assertOnNewSession(session.user.email, enrolled.body.id, authenticator);
  t.equal(requested.webauthn.type, 'request');
  t.same(
    requested.webauthn.credential_options.publicKey.allowCredentials.map((c: any) => c.id),
    [authenticator.credentialId],
  );
  t.equal(decodeJwt(later.access_token).aal, 'aal1');
  const stepped = await verify(later.access_token, enrolled.body.id, requested.id, 'request', assertion);
  t.equal(stepped.status, 200, stepped.text);
  t.equal(decodeJwt(stepped.body.access_token).aal, 'aal2');
  const after = await api.db.query(
    `select web_authn_credential->>'sign_count' as n, last_webauthn_challenge_data as last from mfa_factors where id = $1`,
    [enrolled.body.id],
  );
  t.equal(after.rows[0].n, '0', "the counter is not stored, as the original's request path does not");
  t.equal(after.rows[0].last.type, 'request');
  t.equal(after.rows[0].last.challenge.challenge_id, requested.id);
  const audited = await api.db.query(
    `select count(*)::int as n from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' = 'challenge_created'`,
    [session.user.id],
  );
  t.equal(audited.rows[0].n, 0, 'a WebAuthn challenge writes no challenge_created entry, as in the original (codes do)');
});

t.test('a WebAuthn factor made with an ES384 or a PS256 key verifies and steps up, as the original offers those too', async (t) => {
  for (const algorithm of ['ES384', 'PS256'] as const) {
    const authenticator = newAuthenticator({ algorithm });
    const { session, factorId } = await userWithFactor(authenticator);
    const { session: later, requested, assertion } = await assertOnNewSession(session.user.email, factorId, authenticator);
    const stepped = await verify(later.access_token, factorId, requested.id, 'request', assertion);
    t.equal(stepped.status, 200, `${algorithm}: ${stepped.text}`);
    t.equal(decodeJwt(stepped.body.access_token).aal, 'aal2');
  }
});

t.test("a challenge of one WebAuthn factor may be answered by another verified one's credential, as the original", async (t) => {
  const first = newAuthenticator();
  const { session, factorId: a, aal2 } = await userWithFactor(first);
  const second = newAuthenticator();
  const enrolled = await api.request('POST', '/factors', {
    token: aal2.access_token,
    body: { factor_type: 'webauthn', friendly_name: 'b' },
  });
  t.equal(enrolled.status, 200, enrolled.text);
  const b = enrolled.body.id as string;
  const created = await challenge(aal2.access_token, b);
  const made = await verify(aal2.access_token, b, created.id, 'create', second.create(created.webauthn.credential_options.publicKey));
  t.equal(made.status, 200, made.text);

  const later = await signIn(api, session.user.email);
  const requested = await challenge(later.access_token, a);
  t.same(
    requested.webauthn.credential_options.publicKey.allowCredentials.map((c: any) => c.id).sort(),
    [first.credentialId, second.credentialId].sort(),
    "every verified factor's credential is allowed",
  );
  const answered = await verify(
    later.access_token,
    a,
    requested.id,
    'request',
    second.get(requested.webauthn.credential_options.publicKey),
  );
  t.equal(answered.status, 200, answered.text);
  t.equal(decodeJwt(answered.body.access_token).aal, 'aal2');
  const factors = await api.db.query(`select id, last_webauthn_challenge_data->>'type' as type from mfa_factors where user_id = $1`, [
    session.user.id,
  ]);
  const typeOf = Object.fromEntries(factors.rows.map((r) => [r.id, r.type]));
  t.same(typeOf, { [a]: 'request', [b]: 'create' }, 'the challenged factor is the one recorded as used');
  const claim = await api.db.query(`select s.factor_id from sessions s where s.id = $1`, [
    decodeJwt(answered.body.access_token).session_id,
  ]);
  t.equal(claim.rows[0].factor_id, a);
});

t.test('the MFA verification attempt hook is not shown WebAuthn verifications, as in the original', async (t) => {
  const authenticator = newAuthenticator();
  const { session, factorId } = await userWithFactor(authenticator);
  const { session: later, requested, assertion } = await assertOnNewSession(session.user.email, factorId, authenticator);
  const res = await verify(later.access_token, factorId, requested.id, 'request', assertion);
  t.equal(res.status, 200, 'the hook that refuses everything was not asked');
  const { rows } = await api.db.query('select count(*)::int as n from webauthn_hook_test.events');
  t.equal(rows[0].n, 0, 'nor shown anything');
});

t.test('a replayed assertion is refused; a cloned authenticator is not, as in the original', async (t) => {
  const authenticator = newAuthenticator();
  const { session, factorId } = await userWithFactor(authenticator);
  const clone = authenticator.clone();
  const first = await assertOnNewSession(session.user.email, factorId, authenticator);
  t.equal((await verify(first.session.access_token, factorId, first.requested.id, 'request', first.assertion)).status, 200);
  const replay = await verify(first.session.access_token, factorId, first.requested.id, 'request', first.assertion);
  t.equal(replay.status, 422);
  t.same(
    replay.body,
    { code: 422, error_code: 'mfa_factor_not_found', msg: 'MFA factor with the provided challenge ID not found' },
    'the challenge is spent: deleted, as the original deletes it, so a replay finds none',
  );
  const left = await api.db.query('select count(*)::int as n from mfa_challenges where id = $1', [first.requested.id]);
  t.equal(left.rows[0].n, 0);
  // The same assertion on a fresh challenge: it signed the old one.
  const fresh = await challenge(first.session.access_token, factorId);
  t.same((await verify(first.session.access_token, factorId, fresh.id, 'request', first.assertion)).body, FAILED);

  const cloned = await assertOnNewSession(session.user.email, factorId, clone); // counter 1 again
  const accepted = await verify(cloned.session.access_token, factorId, cloned.requested.id, 'request', cloned.assertion);
  t.equal(accepted.status, 200, accepted.text);
  t.equal(decodeJwt(accepted.body.access_token).aal, 'aal2');
});

t.test('a wrong origin or rp id is refused', async (t) => {
  const authenticator = newAuthenticator();
  const { session, factorId } = await userWithFactor(authenticator);
  const origin = await assertOnNewSession(session.user.email, factorId, authenticator, { origin: 'https://evil.example.com' });
  t.same((await verify(origin.session.access_token, factorId, origin.requested.id, 'request', origin.assertion)).body, FAILED);
  const rp = await assertOnNewSession(session.user.email, factorId, authenticator, { rpId: 'example.com' });
  t.same((await verify(rp.session.access_token, factorId, rp.requested.id, 'request', rp.assertion)).body, FAILED);

  const fresh = await signUp(api);
  const enrolled = await api.request('POST', '/factors', { token: fresh.access_token, body: { factor_type: 'webauthn' } });
  const created = await challenge(fresh.access_token, enrolled.body.id);
  const lying = newAuthenticator().create(created.webauthn.credential_options.publicKey, { origin: 'https://evil.example.com' });
  t.same((await verify(fresh.access_token, enrolled.body.id, created.id, 'create', lying)).body, FAILED);
  const status = await api.db.query('select status from mfa_factors where id = $1', [enrolled.body.id]);
  t.equal(status.rows[0].status, 'unverified');
});

t.test('verify bodies without the webauthn fields are 400s; a ceremony of the other type is refused', async (t) => {
  const session = await signUp(api);
  const enrolled = await api.request('POST', '/factors', { token: session.access_token, body: { factor_type: 'webauthn' } });
  const created = await challenge(session.access_token, enrolled.body.id);
  const post = (body: unknown) => api.request('POST', `/factors/${enrolled.body.id}/verify`, { token: session.access_token, body });
  t.same((await post({ challenge_id: created.id })).body, { code: 400, error_code: 'validation_failed', msg: 'WebAuthn config required' });
  t.same((await post({ challenge_id: created.id, webauthn: { type: 'other' } })).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'WebAuthn type must be create or request',
  });
  t.same((await post({ challenge_id: created.id, webauthn: { type: 'create' } })).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'credential_response required',
  });
  const INVALID = { code: 400, error_code: 'validation_failed', msg: 'Invalid credential_response' };
  for (const type of ['create', 'request']) {
    for (const response of [{}, 'not a credential', [1, 2]]) {
      const res = await post({ challenge_id: created.id, webauthn: { type, credential_response: response } });
      t.same(res.body, INVALID, `${type}: ${JSON.stringify(response)} is no credential, a 400 as the original's`);
    }
  }
  t.same(
    (await post({ challenge_id: '00000000-0000-4000-8000-000000000000', webauthn: { type: 'create' } })).body.msg,
    'credential_response required',
    "the body's own faults come before the challenge is looked up",
  );
  const device = newAuthenticator();
  device.create(created.webauthn.credential_options.publicKey);
  const assertion = device.get({ challenge: created.webauthn.credential_options.publicKey.challenge });
  t.same((await post({ challenge_id: created.id, webauthn: { type: 'request', credential_response: assertion } })).body, FAILED);
});

// WebAuthn (§6.5.1, §7.1) allows credential IDs of at most 1023 bytes: a factor's "create" ceremony
// refuses a longer one as it refuses any malformed credential, and the factor stays without a credential.
t.test('a factor takes a credential ID of 1023 bytes; one of 1024 bytes is refused and nothing is saved', async (t) => {
  const { factorId } = await userWithFactor(newAuthenticator({ credentialIdLength: 1023 }));
  const stored = await api.db.query("select status, web_authn_credential->>'credential_id' as id from mfa_factors where id = $1", [
    factorId,
  ]);
  t.equal(stored.rows[0].status, 'verified');
  t.equal(Buffer.from(stored.rows[0].id, 'base64url').length, 1023);

  const session = await signUp(api);
  const enrolled = await api.request('POST', '/factors', { token: session.access_token, body: { factor_type: 'webauthn' } });
  const created = await challenge(session.access_token, enrolled.body.id);
  const tooLong = newAuthenticator({ credentialIdLength: 1024 }).create(created.webauthn.credential_options.publicKey);
  const res = await verify(session.access_token, enrolled.body.id, created.id, 'create', tooLong);
  t.strictSame([res.status, res.body], [400, { code: 400, error_code: 'validation_failed', msg: 'Invalid credential_response' }]);
  const factor = await api.db.query('select status, web_authn_credential, web_authn_aaguid from mfa_factors where id = $1', [
    enrolled.body.id,
  ]);
  t.strictSame(factor.rows[0], { status: 'unverified', web_authn_credential: null, web_authn_aaguid: null }, 'no credential is saved');
});

t.test('with a verified factor, passkeys are managed from aal2 sessions only', async (t) => {
  const authenticator = newAuthenticator();
  const { session, aal2 } = await userWithFactor(authenticator);
  const aal1 = await signIn(api, session.user.email);
  const refused = await api.request('POST', '/passkeys/registration/options', { token: aal1.access_token, body: {} });
  t.same(refused.body, {
    code: 403,
    error_code: 'insufficient_aal',
    msg: 'AAL2 session is required to manage passkeys when MFA is enabled',
  });
  const created = await register(api, aal2.access_token, newAuthenticator());
  t.equal(created.status, 200, created.text);
  const deleteAtAal1 = await api.request('DELETE', `/passkeys/${created.body.id}`, { token: aal1.access_token });
  t.equal(deleteAtAal1.status, 403);
  t.equal((await api.request('GET', '/passkeys', { token: aal1.access_token })).status, 200, 'listing needs no aal2');
  t.equal((await api.request('DELETE', `/passkeys/${created.body.id}`, { token: aal2.access_token })).status, 204);
});

t.test('auth-js end to end: mfa.webauthn.register, then mfa.webauthn.authenticate on a later session', async (t) => {
  const email = uniqueEmail('webauthn-mfa');
  const device = newAuthenticator();
  const first = authClient(api.url);
  t.equal((await first.signUp({ email, password: 'Secret-password-1' })).error, null);
  const registered = await withBrowserWebAuthn(device, () => first.mfa.webauthn.register({ friendlyName: 'laptop' }));
  t.equal(registered.error, null);
  t.equal(decodeJwt(registered.data!.access_token).aal, 'aal2');
  const factors = await first.mfa.listFactors();
  t.same(
    factors.data!.webauthn.map((f) => [f.friendly_name, f.status]),
    [['laptop', 'verified']],
  );

  const later = authClient(api.url);
  t.equal((await later.signInWithPassword({ email, password: 'Secret-password-1' })).error, null);
  const before = await later.mfa.getAuthenticatorAssuranceLevel();
  t.same([before.data!.currentLevel, before.data!.nextLevel], ['aal1', 'aal2']);
  const stepped = await withBrowserWebAuthn(device, () => later.mfa.webauthn.authenticate({ factorId: factors.data!.webauthn[0].id }));
  t.equal(stepped.error, null);
  const after = await later.mfa.getAuthenticatorAssuranceLevel();
  t.equal(after.data!.currentLevel, 'aal2');
  t.ok(after.data!.currentAuthenticationMethods.some((m) => (typeof m === 'string' ? m : m.method) === 'mfa/webauthn'));
});

t.test('with WebAuthn verification off, challenge and verify both answer mfa_webauthn_verify_not_enabled', async (t) => {
  const enrollOnly = await startTestService({ ...PASSKEY_ENV, AUTH_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true' });
  t.teardown(() => enrollOnly.stop());
  const session = await signUp(enrollOnly);
  const enrolled = await enrollOnly.request('POST', '/factors', {
    token: session.access_token,
    body: { factor_type: 'webauthn', friendly_name: 'key' },
  });
  t.equal(enrolled.status, 200);
  const refused = { status: 422, error_code: 'mfa_webauthn_verify_not_enabled', msg: 'MFA verification is disabled for WebAuthn' };
  const challenged = await enrollOnly.request('POST', `/factors/${enrolled.body.id}/challenge`, { token: session.access_token, body: {} });
  t.same({ status: challenged.status, error_code: challenged.body.error_code, msg: challenged.body.msg }, refused);
  // the original's verify answers this message with the enroll code (docs/differences.md)
  const verified = await enrollOnly.request('POST', `/factors/${enrolled.body.id}/verify`, {
    token: session.access_token,
    body: { challenge_id: crypto.randomUUID(), webauthn: { type: 'create', credential_response: {} } },
  });
  t.same({ status: verified.status, error_code: verified.body.error_code, msg: verified.body.msg }, refused);
});
