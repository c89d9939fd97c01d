// What the WebAuthn ceremonies refuse (docs/passkeys.md#what-a-ceremony-checks), each with the software
// authenticator's real objects made to lie about one thing: a replayed assertion, a changed backup-eligible
// flag, a wrong origin, a wrong relying party id, a challenge expired, used, of another kind or of
// another user, and malformed input. Nothing refused leaves a credential or a session behind.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../dist/server/config/load.js';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { PASSKEY_ENV, authenticationOptions, newAuthenticator, register, signInWithPasskey, storePasskey } from './helpers/passkeys.js';

const api = await startTestService(PASSKEY_ENV);
t.teardown(() => api.stop());

const VERIFICATION_FAILED = { code: 400, error_code: 'webauthn_verification_failed', msg: 'Credential verification failed' };
const NOT_FOUND = { code: 400, error_code: 'webauthn_challenge_not_found', msg: 'Challenge not found or already used' };
const EXPIRED = { code: 400, error_code: 'webauthn_challenge_expired', msg: 'Challenge has expired' };

const count = async (table: string, userId: string) =>
  (await api.db.query(`select count(*)::int as n from ${table} where user_id = $1`, [userId])).rows[0].n as number;

/** A user with one registered passkey on `authenticator`. */
async function userWithPasskey(authenticator = newAuthenticator()) {
  const session = await signUp(api);
  const res = await register(api, session.access_token, authenticator);
  if (res.status !== 200) throw new Error(res.text);
  return { session, authenticator, passkeyId: res.body.id as string };
}

t.test('a replayed assertion is refused: its challenge is used up', async (t) => {
  const { session, authenticator } = await userWithPasskey();
  const { challenge_id, options } = await authenticationOptions(api);
  const credential = authenticator.get(options);
  const first = await api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id, credential } });
  t.equal(first.status, 200);
  const replay = await api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id, credential } });
  t.same(replay.body, NOT_FOUND);
  // The same assertion against a fresh challenge: it signed the old one.
  const fresh = await authenticationOptions(api);
  const onFresh = await api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id: fresh.challenge_id, credential } });
  t.same(onFresh.body, VERIFICATION_FAILED);
  t.equal(await count('sessions', session.user.id), 2, 'the sign-up session and the one sign-in');
});

t.test("a cloned authenticator's counter does not refuse it, as the original: it signs in and the stored counter stays", async (t) => {
  const { session, authenticator, passkeyId } = await userWithPasskey();
  const clone = authenticator.clone();
  t.equal((await signInWithPasskey(api, authenticator)).status, 200, 'counter 1');
  t.equal((await signInWithPasskey(api, authenticator)).status, 200, 'counter 2');
  const cloned = await signInWithPasskey(api, clone); // counter 1 again
  t.equal(cloned.status, 200, cloned.text);
  const stored = await api.db.query('select sign_count from webauthn_credentials where id = $1', [passkeyId]);
  t.equal(stored.rows[0].sign_count, '2', 'the lower counter is not stored');
  t.equal(await count('sessions', session.user.id), 4);
});

t.test('a stored counter of 5 and an assertion counting 3: 200 with tokens, the 5 kept', async (t) => {
  const { authenticator, passkeyId } = await userWithPasskey();
  await api.db.query('update webauthn_credentials set sign_count = 5 where id = $1', [passkeyId]);
  authenticator.signCount = 2; // the next assertion carries 3
  const signedIn = await signInWithPasskey(api, authenticator);
  t.equal(signedIn.status, 200, signedIn.text);
  t.ok(signedIn.body.access_token && signedIn.body.refresh_token);
  const stored = await api.db.query('select sign_count, last_used_at from webauthn_credentials where id = $1', [passkeyId]);
  t.equal(stored.rows[0].sign_count, '5');
  t.ok(stored.rows[0].last_used_at, 'the use is recorded');
  authenticator.signCount = 6;
  t.equal((await signInWithPasskey(api, authenticator)).status, 200);
  t.equal((await api.db.query('select sign_count from webauthn_credentials where id = $1', [passkeyId])).rows[0].sign_count, '7');
});

t.test('two assertions carrying one counter value, sent at once: both sign in, as in the original', async (t) => {
  const { session, authenticator } = await userWithPasskey();
  const twin = authenticator.clone();
  const [a, b] = await Promise.all([authenticationOptions(api), authenticationOptions(api)]);
  const first = authenticator.get(a.options); // counter 1
  const second = twin.get(b.options); // counter 1 too
  const answers = await Promise.all([
    api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id: a.challenge_id, credential: first } }),
    api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id: b.challenge_id, credential: second } }),
  ]);
  t.same(
    answers.map((r) => r.status),
    [200, 200],
  );
  t.equal(await count('sessions', session.user.id), 3, 'the sign-up session and both sign-ins');
});

t.test('an assertion whose backup-eligible flag differs from the registered one is refused, as the original', async (t) => {
  const { session, authenticator, passkeyId } = await userWithPasskey();
  authenticator.backupEligible = true;
  t.same((await signInWithPasskey(api, authenticator)).body, VERIFICATION_FAILED, 'registered without BE, asserted with it');
  const synced = newAuthenticator();
  synced.backupEligible = true;
  const other = await userWithPasskey(synced);
  t.equal((await signInWithPasskey(api, synced)).status, 200, 'registered and asserted with BE');
  synced.backupEligible = false;
  t.same((await signInWithPasskey(api, synced)).body, VERIFICATION_FAILED, 'registered with BE, asserted without');
  t.equal(await count('sessions', session.user.id), 1, 'only the sign-up session');
  t.equal(await count('sessions', other.session.user.id), 2);
  const stored = await api.db.query('select sign_count from webauthn_credentials where id = $1', [passkeyId]);
  t.equal(stored.rows[0].sign_count, '0', 'a refused assertion records nothing');
});

t.test('an authenticator that keeps no counter (always 0) may sign in again', async (t) => {
  const { authenticator } = await userWithPasskey(newAuthenticator({ counterStep: 0 }));
  t.equal((await signInWithPasskey(api, authenticator)).status, 200);
  t.equal((await signInWithPasskey(api, authenticator)).status, 200);
});

t.test('a wrong origin is refused, at registration and at sign-in', async (t) => {
  const session = await signUp(api);
  const authenticator = newAuthenticator();
  const refused = await register(api, session.access_token, authenticator, { origin: 'https://evil.example.com' });
  t.same(refused.body, VERIFICATION_FAILED);
  t.equal(await count('webauthn_credentials', session.user.id), 0);

  const { authenticator: registered, session: owner } = await userWithPasskey();
  const signIn = await signInWithPasskey(api, registered, { origin: 'http://localhost:5174' });
  t.same(signIn.body, VERIFICATION_FAILED);
  t.equal(await count('sessions', owner.user.id), 1, 'only the sign-up session');
  // Every configured origin is accepted.
  t.equal((await signInWithPasskey(api, registered, { origin: 'https://app.example.com' })).status, 200);
});

t.test('a wrong relying party id is refused, at registration and at sign-in', async (t) => {
  const session = await signUp(api);
  const refused = await register(api, session.access_token, newAuthenticator(), { rpId: 'example.com' });
  t.same(refused.body, VERIFICATION_FAILED);
  t.equal(await count('webauthn_credentials', session.user.id), 0);

  const { authenticator, session: owner } = await userWithPasskey();
  const signIn = await signInWithPasskey(api, authenticator, { rpId: 'evil.localhost' });
  t.same(signIn.body, VERIFICATION_FAILED);
  t.equal(await count('sessions', owner.user.id), 1);
});

t.test('a ceremony of the wrong type, or over another challenge, is refused', async (t) => {
  const { authenticator } = await userWithPasskey();
  t.same((await signInWithPasskey(api, authenticator, { type: 'webauthn.create' })).body, VERIFICATION_FAILED);
  t.same((await signInWithPasskey(api, authenticator, { challenge: 'c29tZXRoaW5nIGVsc2U' })).body, VERIFICATION_FAILED);
});

t.test('an expired challenge is refused, then gone', async (t) => {
  const { authenticator, session } = await userWithPasskey();
  const { challenge_id, options } = await authenticationOptions(api);
  await api.db.query(`update webauthn_challenges set expires_at = now() - interval '1 second' where id = $1`, [challenge_id]);
  const credential = authenticator.get(options);
  t.same((await api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id, credential } })).body, EXPIRED);
  t.same((await api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id, credential } })).body, NOT_FOUND);

  const registration = await api.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  await api.db.query(`update webauthn_challenges set expires_at = now() - interval '1 second' where id = $1`, [
    registration.body.challenge_id,
  ]);
  const attestation = newAuthenticator().create(registration.body.options);
  const late = await api.request('POST', '/passkeys/registration/verify', {
    token: session.access_token,
    body: { challenge_id: registration.body.challenge_id, credential: attestation },
  });
  t.same(late.body, EXPIRED);
  t.equal(await count('webauthn_credentials', session.user.id), 1);
});

t.test('WEBAUTHN_CHALLENGE_EXPIRY_DURATION=0 starts, as the original, and every passkey challenge has expired when answered', async (t) => {
  const instant = await startTestService({ ...PASSKEY_ENV, GOTRUE_WEBAUTHN_CHALLENGE_EXPIRY_DURATION: '0' });
  t.teardown(() => instant.stop());
  const session = await signUp(instant);
  const registration = await instant.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  t.equal(registration.status, 200);
  const attestation = newAuthenticator().create(registration.body.options);
  const registered = await instant.request('POST', '/passkeys/registration/verify', {
    token: session.access_token,
    body: { challenge_id: registration.body.challenge_id, credential: attestation },
  });
  t.same(registered.body, EXPIRED, 'registration');
  const authenticator = newAuthenticator();
  await storePasskey(instant, session.user.id, authenticator);
  t.same((await signInWithPasskey(instant, authenticator)).body, EXPIRED, 'sign-in');
  const written = await instant.db.query('select count(*)::int as n from webauthn_credentials where user_id = $1', [session.user.id]);
  t.equal(written.rows[0].n, 1, 'only the passkey stored beforehand');
});

t.test("a registration challenge is the asking user's, and only for registration", async (t) => {
  const owner = await signUp(api);
  const other = await signUp(api);
  const options = await api.request('POST', '/passkeys/registration/options', { token: owner.access_token, body: {} });
  const credential = newAuthenticator().create(options.body.options);
  const stolen = await api.request('POST', '/passkeys/registration/verify', {
    token: other.access_token,
    body: { challenge_id: options.body.challenge_id, credential },
  });
  t.same(stolen.body, NOT_FOUND);
  const asSignIn = await api.request('POST', '/passkeys/authentication/verify', {
    body: { challenge_id: options.body.challenge_id, credential },
  });
  t.same(asSignIn.body, NOT_FOUND);
  const signInChallenge = await authenticationOptions(api);
  const asRegistration = await api.request('POST', '/passkeys/registration/verify', {
    token: owner.access_token,
    body: { challenge_id: signInChallenge.challenge_id, credential },
  });
  t.same(asRegistration.body, NOT_FOUND);
  t.equal(await count('webauthn_credentials', owner.user.id), 0);
  t.equal(await count('webauthn_credentials', other.user.id), 0);
});

t.test('an unknown challenge, and an assertion of an authenticator never registered, are refused', async (t) => {
  const { session } = await userWithPasskey();
  const stranger = newAuthenticator();
  // Bound to the real user handle without being registered.
  const options = await api.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  stranger.create(options.body.options);
  const unknown = await api.request('POST', '/passkeys/registration/verify', {
    token: session.access_token,
    body: { challenge_id: '00000000-0000-0000-0000-000000000000', credential: stranger.create(options.body.options) },
  });
  t.same(unknown.body, NOT_FOUND);
  t.same((await signInWithPasskey(api, stranger)).body, VERIFICATION_FAILED);
});

t.test('malformed verify bodies are clear 400s', async (t) => {
  const { challenge_id } = await authenticationOptions(api);
  const verify = (body: unknown) => api.request('POST', '/passkeys/authentication/verify', { body });
  t.same((await verify({ credential: {} })).body, { code: 400, error_code: 'validation_failed', msg: 'challenge_id is required' });
  t.same((await verify({ challenge_id })).body, { code: 400, error_code: 'validation_failed', msg: 'credential is required' });
  t.same((await verify({ challenge_id: 'nope', credential: {} })).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'challenge_id must be a valid UUID',
  });
  t.same((await verify({ challenge_id: 7, credential: {} })).body, {
    code: 400,
    error_code: 'bad_json',
    msg: 'Could not parse request body as JSON: json: cannot unmarshal number into Go struct field PasskeyAuthenticationVerifyParams.challenge_id of type string',
  });
  const invalid = { code: 400, error_code: 'webauthn_verification_failed', msg: 'Invalid credential response' };
  t.same((await verify({ challenge_id, credential: { id: 'x' } })).body, invalid);
  const garbage = {
    id: 'AAAA',
    rawId: 'AAAA',
    type: 'public-key',
    response: { clientDataJSON: 'AAAA', authenticatorData: 'AAAA', signature: 'AAAA', userHandle: 'AAAA' },
  };
  // Fields that are base64url but hold no client data JSON, nor authenticator data: the original's library
  // fails to parse them before it verifies anything, so "Invalid credential response" too.
  const second = await authenticationOptions(api);
  t.same((await verify({ challenge_id: second.challenge_id, credential: garbage })).body, invalid);
  const session = await signUp(api);
  const reg = await api.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  const badCbor = { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: 'AAAA', attestationObject: '_____w' } };
  const res = await api.request('POST', '/passkeys/registration/verify', {
    token: session.access_token,
    body: { challenge_id: reg.body.challenge_id, credential: badCbor },
  });
  t.same(res.body, invalid, 'an attestation object that is no CBOR map');
});

// WebAuthn (§6.5.1, §7.1) allows credential IDs of at most 1023 bytes; a longer one is no valid attestation
// and must not become a row whose ID the authenticator could never have been asked for.
t.test('a credential ID of 1023 bytes registers and signs in; one of 1024 bytes is refused and nothing is stored', async (t) => {
  const longest = newAuthenticator({ credentialIdLength: 1023 });
  const { session } = await userWithPasskey(longest);
  const stored = await api.db.query('select length(credential_id) as n from webauthn_credentials where user_id = $1', [session.user.id]);
  t.strictSame(
    stored.rows.map((r) => r.n),
    [1023],
  );
  t.equal((await signInWithPasskey(api, longest)).status, 200, 'and signs in');

  const other = await signUp(api);
  const res = await register(api, other.access_token, newAuthenticator({ credentialIdLength: 1024 }));
  t.strictSame(
    [res.status, res.body],
    [400, { code: 400, error_code: 'webauthn_verification_failed', msg: 'Invalid credential response' }],
  );
  t.equal(await count('webauthn_credentials', other.user.id), 0, 'no passkey is stored');
  const audited = await api.db.query(
    "select count(*)::int as n from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' = 'passkey_created'",
    [other.user.id],
  );
  t.equal(audited.rows[0].n, 0, 'nor audited');
});

// The attestation signs the credential ID inside it; the ID the client reports beside it (id, rawId) is
// what its sign-ins will name. A client that reports another authenticator's ID than the one attested
// must not register anything (WebAuthn §7.1 step 27 presumes they agree).
t.test('a credential whose reported ID is not the attested one is refused and nothing is stored', async (t) => {
  const session = await signUp(api);
  const options = await api.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  const credential = newAuthenticator().create(options.body.options);
  const elsewhere = newAuthenticator().credentialId;
  const res = await api.request('POST', '/passkeys/registration/verify', {
    token: session.access_token,
    body: { challenge_id: options.body.challenge_id, credential: { ...credential, id: elsewhere, rawId: elsewhere } },
  });
  t.strictSame([res.status, res.body], [400, VERIFICATION_FAILED]);
  t.equal(await count('webauthn_credentials', session.user.id), 0, 'no passkey is stored');
});

// As the original since it stopped refusing to start: deployments switched the factor switches on when the
// client still sent the relying party itself (the auth-js test stack does), and must keep starting.
t.test('PASSKEY_ENABLED and the WebAuthn factor switches without the relying party start with a warning', async (t) => {
  const passkeys = loadConfig({ envFile: null, env: { AUTH_PASSKEY_ENABLED: 'true' } });
  t.match(
    passkeys.warnings.join('\n'),
    /AUTH_PASSKEY_ENABLED is true but AUTH_WEBAUTHN_RP_ID, AUTH_WEBAUTHN_RP_DISPLAY_NAME, AUTH_WEBAUTHN_RP_ORIGINS are empty: every WebAuthn ceremony/,
  );
  const factors = loadConfig({
    envFile: null,
    env: { GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true', AUTH_MFA_WEB_AUTHN_VERIFY_ENABLED: 'true', AUTH_WEBAUTHN_RP_ID: 'example.com' },
  });
  t.match(
    factors.warnings.join('\n'),
    /GOTRUE_MFA_WEB_AUTHN_ENROLL_ENABLED, AUTH_MFA_WEB_AUTHN_VERIFY_ENABLED are true but AUTH_WEBAUTHN_RP_DISPLAY_NAME, AUTH_WEBAUTHN_RP_ORIGINS are empty/,
  );
  const complete = loadConfig({
    envFile: null,
    env: {
      AUTH_PASSKEY_ENABLED: 'true',
      AUTH_WEBAUTHN_RP_ID: 'example.com',
      AUTH_WEBAUTHN_RP_DISPLAY_NAME: 'Example',
      AUTH_WEBAUTHN_RP_ORIGINS: 'https://example.com',
    },
  });
  t.notMatch(complete.warnings.join('\n'), /WEBAUTHN/, 'no warning once the relying party is set');
});

t.test(
  'without the relying party, or with an RP id the original refuses, every ceremony is 500 and writes nothing; the rest works',
  async (t) => {
    const unusable = {
      'no relying party': {},
      // it starts there too, and the original's WebAuthn library refuses the id at each ceremony: a port is no part of it
      'an RP id with a port': { ...PASSKEY_ENV, AUTH_WEBAUTHN_RP_ID: 'localhost:5173' },
    };
    for (const [label, relyingParty] of Object.entries(unusable)) {
      await t.test(label, async (t) => {
        const bare = await startTestService({
          ...relyingParty,
          AUTH_MAILER_AUTOCONFIRM: 'true',
          AUTH_PASSKEY_ENABLED: 'true',
          AUTH_MFA_WEB_AUTHN_ENROLL_ENABLED: 'true',
          AUTH_MFA_WEB_AUTHN_VERIFY_ENABLED: 'true',
        });
        t.teardown(() => bare.stop());
        // every 500 carries an error_id for the log, as the original's do
        const unconfigured = {
          code: 500,
          error_code: 'unexpected_failure',
          msg: 'Failed to initialize WebAuthn',
          error_id: /^[0-9a-f-]{36}$/,
        };
        const user = await signUp(bare);
        t.ok(user.access_token, 'sign-up and sign-in work as ever');
        const token = user.access_token;
        t.match(
          (await bare.request('POST', '/passkeys/authentication/options', { body: {} })).body,
          unconfigured,
          'passkey sign-in options',
        );
        t.match(
          (await bare.request('POST', '/passkeys/registration/options', { token, body: {} })).body,
          unconfigured,
          'passkey registration options',
        );
        t.match(
          (await bare.request('POST', '/passkeys/registration/verify', { token, body: { challenge_id: randomUUID(), credential: {} } }))
            .body,
          unconfigured,
          'passkey registration verify',
        );
        const enrolled = await bare.request('POST', '/factors', { token, body: { factor_type: 'webauthn' } });
        t.equal(
          enrolled.status,
          200,
          'a WebAuthn factor is enrolled, as the original enrolls it: the relying party is needed from the challenge on',
        );
        const challenge = await bare.request('POST', `/factors/${enrolled.body.id}/challenge`, { token, body: {} });
        t.equal(challenge.status, 500);
        t.match(challenge.body, unconfigured, 'factor challenge');
        const written = await bare.db.query(
          `select (select count(*) from webauthn_challenges)::int as passkey_challenges,
                (select count(*) from mfa_challenges where factor_id = $1)::int as factor_challenges`,
          [enrolled.body.id],
        );
        t.strictSame(written.rows[0], { passkey_challenges: 0, factor_challenges: 0 }, 'no challenge was stored');
      });
    }
  },
);

t.test('with PASSKEY_ENABLED off every /passkeys route answers 404 passkey_disabled, before any other check', async (t) => {
  const off = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => off.stop());
  const disabled = { code: 404, error_code: 'passkey_disabled', msg: 'Passkeys are disabled' };
  for (const [method, path] of [
    ['POST', '/passkeys/authentication/options'],
    ['POST', '/passkeys/authentication/verify'],
    ['POST', '/passkeys/registration/options'],
    ['POST', '/passkeys/registration/verify'],
    ['GET', '/passkeys'],
    ['PATCH', '/passkeys/00000000-0000-0000-0000-000000000000'],
    ['DELETE', '/passkeys/00000000-0000-0000-0000-000000000000'],
  ]) {
    t.same((await off.request(method, path, method === 'GET' ? {} : { body: {} })).body, disabled, `${method} ${path}`);
  }
  t.equal((await off.request('GET', '/settings')).body.passkeys_enabled, false);
});
