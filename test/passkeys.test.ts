// Passkeys over HTTP (docs/passkeys.md): registering with the software authenticator's real attestation,
// signing in with its real assertion (a session with amr "passkey"), listing, renaming and deleting, the
// admin list and delete, and who may not register.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { adminToken } from './helpers/admin.js';
import { afterSessionEnded, behindDeletion, holdLock, inOrderBehind, inOrderBehindUserLock } from './helpers/row-lock.js';
import {
  PASSKEY_ENV,
  RP_ID,
  authenticationOptions,
  newAuthenticator,
  register,
  signInWithPasskey,
  storePasskey,
} from './helpers/passkeys.js';

const api = await startTestService({
  ...PASSKEY_ENV,
  AUTH_PASSKEY_MAX_PASSKEYS_PER_USER: '2',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  // one token per 5 minutes after the burst of 30: a client's 31st request is refused whatever the timing
  AUTH_RATE_LIMIT_HEADER: 'X-Client-IP',
  AUTH_RATE_LIMIT_PASSKEY: '1',
});
t.teardown(() => api.stop());
const admin = await adminToken('service_role');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('registration options: a challenge kept server-side, for a discoverable credential of this user', async (t) => {
  const session = await signUp(api);
  const res = await api.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  t.equal(res.status, 200);
  t.match(res.body.challenge_id, UUID);
  const now = Math.floor(Date.now() / 1000);
  t.ok(res.body.expires_at > now && res.body.expires_at <= now + 301, 'expires in WEBAUTHN_CHALLENGE_EXPIRY_DURATION (300 s)');
  const { options } = res.body;
  t.same(options.rp, { name: 'Portcullis tests', id: RP_ID });
  t.equal(Buffer.from(options.user.id, 'base64url').toString(), session.user.id, 'the user handle is the user id, as the original');
  t.equal(options.user.name, session.user.email);
  t.same(
    options.pubKeyCredParams,
    // the original's library's list and order: ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384, PS512, EdDSA
    [-7, -35, -36, -257, -258, -259, -37, -38, -39, -8].map((alg) => ({ alg, type: 'public-key' })),
  );
  t.equal(options.authenticatorSelection.residentKey, 'required');
  t.equal(options.attestation, 'none');
  const { rows } = await api.db.query('select user_id, challenge_type, session_data from webauthn_challenges where id = $1', [
    res.body.challenge_id,
  ]);
  t.same(rows, [
    {
      user_id: session.user.id,
      challenge_type: 'registration',
      session_data: { challenge: options.challenge, user_verification: 'preferred' },
    },
  ]);
});

t.test("the options' timeout is the original's 300000 ms whatever WEBAUTHN_CHALLENGE_EXPIRY_DURATION is", async (t) => {
  const longer = await startTestService({ ...PASSKEY_ENV, AUTH_WEBAUTHN_CHALLENGE_EXPIRY_DURATION: '10m' });
  t.teardown(() => longer.stop());
  const session = await signUp(longer);
  const registration = await longer.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  const signIn = await longer.request('POST', '/passkeys/authentication/options', { body: {} });
  for (const [name, res] of [
    ['registration', registration],
    ['sign-in', signIn],
  ] as const) {
    t.equal(res.body.options.timeout, 300_000, `${name}: timeout`);
    const { rows } = await longer.db.query(
      'select extract(epoch from expires_at - created_at)::int as ttl from webauthn_challenges where id = $1',
      [res.body.challenge_id],
    );
    t.equal(rows[0].ttl, 600, `${name}: the challenge lives 10 minutes`);
  }
});

t.test('register a passkey, then sign in with it: a session like any other, amr "passkey"', async (t) => {
  const session = await signUp(api);
  const authenticator = newAuthenticator();
  const created = await register(api, session.access_token, authenticator);
  t.equal(created.status, 200, created.text);
  t.match(created.body, { id: UUID, friendly_name: 'Passkey' });
  t.same(Object.keys(created.body), ['id', 'friendly_name', 'created_at']);
  const stored = await api.db.query(
    'select user_id, credential_id, sign_count, attestation_type, aaguid from webauthn_credentials where id = $1',
    [created.body.id],
  );
  t.same(stored.rows, [
    {
      user_id: session.user.id,
      credential_id: Buffer.from(authenticator.credentialId, 'base64url'),
      sign_count: '0',
      attestation_type: 'none',
      // "none" attestation's all-zero AAGUID is stored as it came, as the original stores it
      aaguid: '00000000-0000-0000-0000-000000000000',
    },
  ]);

  const options = await authenticationOptions(api);
  t.same(options.options.allowCredentials ?? [], [], 'discoverable sign-in names no credential');
  t.equal(options.options.rpId, RP_ID);
  const credential = authenticator.get(options.options);
  const signedIn = await api.request('POST', '/passkeys/authentication/verify', {
    headers: { 'X-Forwarded-For': '198.51.100.23' },
    body: { challenge_id: options.challenge_id, credential },
  });
  t.equal(signedIn.status, 200, signedIn.text);
  t.equal(signedIn.body.token_type, 'bearer');
  t.equal(signedIn.body.user.id, session.user.id);
  t.ok(signedIn.body.refresh_token);
  const claims = decodeJwt(signedIn.body.access_token);
  t.equal(claims.aal, 'aal1');
  t.same(
    (claims.amr as any[]).map((a) => a.method),
    ['passkey'],
  );
  const me = await api.request('GET', '/user', { token: signedIn.body.access_token });
  t.equal(me.status, 200);
  t.equal(me.body.id, session.user.id);

  const after = await api.db.query('select sign_count, last_used_at from webauthn_credentials where id = $1', [created.body.id]);
  t.equal(after.rows[0].sign_count, '1', 'the signature counter is stored');
  t.ok(after.rows[0].last_used_at);
  // The sign-up's own login entry carries no passkey_id: only the passkey's entries are compared.
  const audit = await api.db.query(
    `select payload->>'action' as action, payload->'traits'->>'passkey_id' as passkey_id, ip_address from audit_log_entries
     where payload->>'actor_id' = $1 and payload->'traits' ? 'passkey_id' order by created_at`,
    [session.user.id],
  );
  t.same(audit.rows, [
    { action: 'passkey_created', passkey_id: created.body.id, ip_address: '127.0.0.1' },
    { action: 'login', passkey_id: created.body.id, ip_address: '198.51.100.23' },
  ]);
});

t.test('an ES384 or a PS256 credential registers and signs in, as the original offers those algorithms too', async (t) => {
  for (const algorithm of ['ES384', 'PS256'] as const) {
    const session = await signUp(api);
    const authenticator = newAuthenticator({ algorithm });
    const created = await register(api, session.access_token, authenticator);
    t.equal(created.status, 200, `${algorithm}: ${created.text}`);
    const stored = await api.db.query('select credential_id from webauthn_credentials where id = $1', [created.body.id]);
    t.same(stored.rows, [{ credential_id: Buffer.from(authenticator.credentialId, 'base64url') }], `${algorithm}: stored`);
    const signedIn = await signInWithPasskey(api, authenticator);
    t.equal(signedIn.status, 200, `${algorithm}: ${signedIn.text}`);
    t.equal(signedIn.body.user.id, session.user.id);
  }
});

t.test('list, rename and delete own passkeys', async (t) => {
  const session = await signUp(api);
  const token = session.access_token;
  const authenticator = newAuthenticator();
  const { body: first } = await register(api, token, authenticator);
  const { body: second } = await register(api, token, newAuthenticator());

  const listed = await api.request('GET', '/passkeys', { token });
  t.equal(listed.status, 200);
  t.same(
    listed.body.map((p: any) => p.id),
    [first.id, second.id],
  );
  t.same(Object.keys(listed.body[0]), ['id', 'friendly_name', 'created_at'], 'no last_used_at before a sign-in, no key material');

  t.equal((await signInWithPasskey(api, authenticator)).status, 200);
  const used = await api.request('GET', '/passkeys', { token });
  t.type(used.body[0].last_used_at, 'string');

  const renamed = await api.request('PATCH', `/passkeys/${first.id}`, { token, body: { friendly_name: 'Work laptop' } });
  t.equal(renamed.status, 200);
  t.equal(renamed.body.id, first.id);
  t.equal(renamed.body.friendly_name, 'Work laptop');
  t.equal((await api.request('GET', '/passkeys', { token })).body[0].friendly_name, 'Work laptop');

  const empty = await api.request('PATCH', `/passkeys/${first.id}`, { token, body: { friendly_name: '' } });
  t.same(empty.body, { code: 400, error_code: 'validation_failed', msg: 'friendly_name is required' });
  const long = await api.request('PATCH', `/passkeys/${first.id}`, { token, body: { friendly_name: 'é'.repeat(61) } });
  t.same(long.body, { code: 400, error_code: 'validation_failed', msg: 'friendly_name must be 120 characters or less' });
  const unknown = await api.request('PATCH', `/passkeys/00000000-0000-0000-0000-000000000000`, { token, body: { friendly_name: 'x' } });
  t.same(unknown.body, { code: 404, error_code: 'validation_failed', msg: 'Passkey not found' });
  const malformed = await api.request('DELETE', `/passkeys/not-a-uuid`, { token });
  t.same(malformed.body, { code: 404, error_code: 'validation_failed', msg: 'Passkey not found' });

  const other = await signUp(api);
  const foreign = await api.request('DELETE', `/passkeys/${first.id}`, { token: other.access_token });
  t.equal(foreign.status, 404, "another user's passkey is not found");

  const deleted = await api.request('DELETE', `/passkeys/${first.id}`, { token });
  t.equal(deleted.status, 204);
  t.equal(deleted.text, '');
  t.same(
    (await api.request('GET', '/passkeys', { token })).body.map((p: any) => p.id),
    [second.id],
  );
  const refused = await signInWithPasskey(api, authenticator);
  t.same(refused.body, { code: 400, error_code: 'webauthn_verification_failed', msg: 'Credential verification failed' });
});

t.test('PASSKEY_MAX_PASSKEYS_PER_USER, and an authenticator registered twice', async (t) => {
  const { access_token: token } = await signUp(api);
  const authenticator = newAuthenticator();
  t.equal((await register(api, token, authenticator)).status, 200);
  // A real authenticator refuses a user's excluded credential; one that ignored the list is refused here.
  const options = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  t.same(
    options.body.options.excludeCredentials.map((c: any) => c.id),
    [authenticator.credentialId],
  );
  const again = authenticator.create({ ...options.body.options, excludeCredentials: [] });
  const duplicate = await api.request('POST', '/passkeys/registration/verify', {
    token,
    body: { challenge_id: options.body.challenge_id, credential: again },
  });
  t.same(duplicate.body, { code: 422, error_code: 'webauthn_credential_exists', msg: 'This credential is already registered' });

  t.equal((await register(api, token, newAuthenticator())).status, 200);
  const third = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  t.same(third.body, { code: 422, error_code: 'too_many_passkeys', msg: 'Maximum number of passkeys reached' });
});

t.test('PASSKEY_MAX_PASSKEYS_PER_USER=0 starts, as the original: no new passkey, those registered before still sign in', async (t) => {
  const frozen = await startTestService({ ...PASSKEY_ENV, GOTRUE_PASSKEY_MAX_PASSKEYS_PER_USER: '0' });
  t.teardown(() => frozen.stop());
  const session = await signUp(frozen);
  const refused = await frozen.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  t.same(refused.body, { code: 422, error_code: 'too_many_passkeys', msg: 'Maximum number of passkeys reached' });
  const authenticator = newAuthenticator();
  await storePasskey(frozen, session.user.id, authenticator);
  const signedIn = await signInWithPasskey(frozen, authenticator);
  t.equal(signedIn.status, 200, signedIn.text);
  t.equal(signedIn.body.user.id, session.user.id);
});

t.test('WEBAUTHN_RP_ORIGINS entries are compared as the original compares them: case, a default port and a path aside', async (t) => {
  const loose = await startTestService({ ...PASSKEY_ENV, AUTH_WEBAUTHN_RP_ORIGINS: 'http://LOCALHOST:5173/app/' });
  t.teardown(() => loose.stop());
  const session = await signUp(loose);
  const authenticator = newAuthenticator();
  t.equal((await register(loose, session.access_token, authenticator)).status, 200, 'registered from http://localhost:5173');
  const signedIn = await signInWithPasskey(loose, authenticator);
  t.equal(signedIn.status, 200, signedIn.text);
});

t.test('without WEBAUTHN_RP_DISPLAY_NAME, passkeys registered before still sign in; only registering needs the name', async (t) => {
  const nameless = await startTestService({ ...PASSKEY_ENV, AUTH_WEBAUTHN_RP_DISPLAY_NAME: '' });
  t.teardown(() => nameless.stop());
  const session = await signUp(nameless);
  const authenticator = newAuthenticator();
  await storePasskey(nameless, session.user.id, authenticator);
  const signedIn = await signInWithPasskey(nameless, authenticator);
  t.equal(signedIn.status, 200, signedIn.text);
  t.equal(signedIn.body.user.id, session.user.id);
  const offered = await nameless.request('POST', '/passkeys/registration/options', { token: session.access_token, body: {} });
  t.same(
    [offered.status, offered.body.msg],
    [500, 'Failed to initialize WebAuthn'],
    'as the original: no credential is offered without the name',
  );
});

t.test("a user handle must be the user id's text exactly: in capitals it names no passkey, as in the original", async (t) => {
  const session = await signUp(api);
  const authenticator = newAuthenticator();
  await storePasskey(api, session.user.id, authenticator);
  const { challenge_id, options } = await authenticationOptions(api);
  const credential = authenticator.get(options);
  // The handle is not signed, so a client may send it in another case.
  credential.response.userHandle = Buffer.from(session.user.id.toUpperCase()).toString('base64url');
  const res = await api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id, credential } });
  t.same([res.status, res.body.msg], [400, 'Credential verification failed'], res.text);
});

t.test("a challenge_id in another spelling the original's UUID reading takes names the challenge", async (t) => {
  const session = await signUp(api);
  const authenticator = newAuthenticator();
  await storePasskey(api, session.user.id, authenticator);
  const { challenge_id, options } = await authenticationOptions(api);
  const credential = authenticator.get(options);
  const res = await api.request('POST', '/passkeys/authentication/verify', {
    body: { challenge_id: `{${challenge_id.toUpperCase()}}`, credential },
  });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.user.id, session.user.id);
});

t.test('anonymous users cannot register passkeys; every passkey route needs a session but sign-in', async (t) => {
  const anonymous = await api.request('POST', '/signup', { body: {} });
  t.equal(anonymous.status, 200);
  const res = await api.request('POST', '/passkeys/registration/options', { token: anonymous.body.access_token, body: {} });
  const refused = { code: 403, error_code: 'no_authorization', msg: 'Anonymous user not allowed to perform these actions' };
  t.same(res.body, refused);
  // The user is anonymous no more, but the token still says it was: refused on the claim, as the original.
  await api.db.query('update users set is_anonymous = false where id = $1', [anonymous.body.user.id]);
  const stale = { token: anonymous.body.access_token, body: {} };
  t.same((await api.request('POST', '/passkeys/registration/options', stale)).body, refused, 'options, on the claim');
  const verify = { token: anonymous.body.access_token, body: { challenge_id: randomUUID(), credential: {} } };
  t.same((await api.request('POST', '/passkeys/registration/verify', verify)).body, refused, 'verify, on the claim');
  for (const [method, path] of [
    ['POST', '/passkeys/registration/options'],
    ['POST', '/passkeys/registration/verify'],
    ['GET', '/passkeys'],
    ['PATCH', '/passkeys/00000000-0000-0000-0000-000000000000'],
    ['DELETE', '/passkeys/00000000-0000-0000-0000-000000000000'],
  ]) {
    t.equal((await api.request(method, path, method === 'GET' ? {} : { body: {} })).status, 401, `${method} ${path}`);
  }
});

t.test('a banned user cannot sign in with a passkey', async (t) => {
  const session = await signUp(api);
  const authenticator = newAuthenticator();
  t.equal((await register(api, session.access_token, authenticator)).status, 200);
  const ban = await api.request('PUT', `/admin/users/${session.user.id}`, { token: admin, body: { ban_duration: '24h' } });
  t.equal(ban.status, 200);
  const res = await signInWithPasskey(api, authenticator);
  t.same(res.body, { code: 403, error_code: 'user_banned', msg: 'User is banned' });
  const sessions = await api.db.query('select count(*)::int as n from sessions where user_id = $1', [session.user.id]);
  t.equal(sessions.rows[0].n, 1, 'no session was created');
});

t.test('admin: list and delete a user’s passkeys', async (t) => {
  const session = await signUp(api);
  const keep = await register(api, session.access_token, newAuthenticator());
  const drop = await register(api, session.access_token, newAuthenticator());

  const listed = await api.request('GET', `/admin/users/${session.user.id}/passkeys`, { token: admin });
  t.equal(listed.status, 200);
  t.same(
    listed.body.map((p: any) => p.id),
    [keep.body.id, drop.body.id],
  );
  // Both ids in other spellings the original's UUID reading takes; the audit names the canonical form.
  const deleted = await api.request(
    'DELETE',
    `/admin/users/urn:uuid:${session.user.id}/passkeys/${encodeURIComponent(`{${drop.body.id.replace(/-/g, '').toUpperCase()}}`)}`,
    { token: admin },
  );
  t.equal(deleted.status, 204);
  t.same(
    (await api.request('GET', `/admin/users/${session.user.id}/passkeys`, { token: admin })).body.map((p: any) => p.id),
    [keep.body.id],
  );
  const audit = await api.db.query(
    `select payload from audit_log_entries where payload->>'action' = 'passkey_deleted' and payload->'traits'->>'passkey_id' = $1`,
    [drop.body.id],
  );
  t.match(audit.rows[0].payload, {
    actor_id: '00000000-0000-0000-0000-000000000000',
    actor_username: 'service_role',
    traits: { user_id: session.user.id },
  });

  const again = await api.request('DELETE', `/admin/users/${session.user.id}/passkeys/${drop.body.id}`, { token: admin });
  t.same(again.body, { code: 404, error_code: 'validation_failed', msg: 'Passkey not found' });
  const unknownUser = await api.request('GET', `/admin/users/00000000-0000-0000-0000-000000000001/passkeys`, { token: admin });
  t.equal(unknownUser.status, 404);
  t.equal(unknownUser.body.error_code, 'user_not_found');
  const notAdmin = await api.request('GET', `/admin/users/${session.user.id}/passkeys`, { token: session.access_token });
  t.equal(notAdmin.status, 403);
});

t.test('a rename and deletions racing a deletion of one passkey: one 204, the others the 404 of a deleted passkey', async (t) => {
  const session = await signUp(api);
  const token = session.access_token;
  const { body: passkey } = await register(api, token, newAuthenticator());
  const path = `/passkeys/${passkey.id}`;
  // All four reach the passkey's row while the test holds it, and take it in this order once it is let go.
  const held = await holdLock(api.db, 'select 1 from webauthn_credentials where id = $1 for update', [passkey.id]);
  const replies = await inOrderBehind(held, [
    () => api.request('DELETE', path, { token }),
    () => api.request('PATCH', path, { token, body: { friendly_name: 'n' } }),
    () => api.request('DELETE', `/admin/users/${session.user.id}${path}`, { token: admin }),
    () => api.request('DELETE', path, { token }),
  ]);
  const gone = { code: 404, error_code: 'validation_failed', msg: 'Passkey not found' };
  t.strictSame(
    replies.map((r) => [r.status, r.status === 204 ? null : r.body]),
    [
      [204, null],
      [404, gone],
      [404, gone],
      [404, gone],
    ],
  );
  const audit = await api.db.query(
    `select payload->>'action' as action from audit_log_entries
     where payload->'traits'->>'passkey_id' = $1 and payload->>'action' in ('passkey_updated', 'passkey_deleted')`,
    [passkey.id],
  );
  t.strictSame(
    audit.rows.map((r) => r.action),
    ['passkey_deleted'],
    'only the deletion that happened is audited',
  );
});

t.test('GET /settings says passkeys are enabled', async (t) => {
  t.equal((await api.request('GET', '/settings')).body.passkeys_enabled, true);
});

t.test('RATE_LIMIT_PASSKEY: a client may ask for 30 sign-in challenges in a burst, then 429', async (t) => {
  const ask = (ip: string) => api.request('POST', '/passkeys/authentication/options', { headers: { 'X-Client-IP': ip }, body: {} });
  for (let i = 0; i < 30; i++) t.equal((await ask('192.0.2.7')).status, 200);
  const refused = await ask('192.0.2.7');
  t.equal(refused.status, 429);
  t.equal(refused.body.error_code, 'over_request_rate_limit');
  t.ok(Number(refused.headers.get('retry-after')) > 0);
  t.equal((await ask('192.0.2.8')).status, 200, 'another client has its own bucket');
  const verify = await api.request('POST', '/passkeys/authentication/verify', { headers: { 'X-Client-IP': '192.0.2.7' }, body: {} });
  t.equal(verify.status, 400, 'verify is not in the bucket');
});

t.test('RATE_LIMIT_PASSKEY may be fractional, as the original: 2.5 per 5 minutes refills one challenge every 120 s', async (t) => {
  const fractional = await startTestService({ ...PASSKEY_ENV, AUTH_RATE_LIMIT_HEADER: 'X-Client-IP', GOTRUE_RATE_LIMIT_PASSKEY: '2.5' });
  t.teardown(() => fractional.stop());
  const ask = () => fractional.request('POST', '/passkeys/authentication/options', { headers: { 'X-Client-IP': '192.0.2.9' }, body: {} });
  for (let i = 0; i < 30; i++) t.equal((await ask()).status, 200);
  const refused = await ask();
  t.equal(refused.status, 429);
  t.equal(refused.headers.get('retry-after'), '120', '300 s / 2.5');
});

t.test('deleting a user deletes their passkeys, soft deletion too', async (t) => {
  for (const soft of [false, true]) {
    const session = await signUp(api);
    t.equal((await register(api, session.access_token, newAuthenticator())).status, 200);
    const deleted = await api.request('DELETE', `/admin/users/${session.user.id}`, { token: admin, body: { should_soft_delete: soft } });
    t.equal(deleted.status, 200);
    const left = await api.db.query('select count(*)::int as n from webauthn_credentials where user_id = $1', [session.user.id]);
    t.equal(left.rows[0].n, 0, soft ? 'soft' : 'hard');
  }
});

t.test('a session ended while a registration waits for the user: 403 session_not_found, no passkey', async (t) => {
  const ended = { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' };
  const written = async (userId: string) => {
    const { rows } = await api.db.query(
      `select (select count(*)::int from webauthn_challenges where user_id = $1) as challenges,
              (select count(*)::int from webauthn_credentials where user_id = $1) as passkeys,
              (select count(*)::int from audit_log_entries
                where payload->>'actor_id' = $1::text and payload->>'action' = 'passkey_created') as audited`,
      [userId],
    );
    return rows[0];
  };
  const first = await signUp(api);
  const options = await afterSessionEnded(api, first.user.id, first.access_token, () =>
    api.request('POST', '/passkeys/registration/options', { token: first.access_token, body: {} }),
  );
  t.strictSame([options.status, options.body], [403, ended], 'options');
  t.strictSame(await written(first.user.id), { challenges: 0, passkeys: 0, audited: 0 }, 'options: no challenge');
  const second = await signUp(api);
  const token = second.access_token;
  const started = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
  const credential = newAuthenticator().create(started.body.options);
  const verified = await afterSessionEnded(api, second.user.id, token, () =>
    api.request('POST', '/passkeys/registration/verify', { token, body: { challenge_id: started.body.challenge_id, credential } }),
  );
  t.strictSame([verified.status, verified.body], [403, ended], 'verify');
  // The attestation passed: the challenge is spent only with the passkey's insert, which was rolled back.
  t.strictSame(await written(second.user.id), { challenges: 1, passkeys: 0, audited: 0 }, 'verify: no passkey, the challenge kept');
});

t.test('a session ended while a rename or deletion waits for the user: 403 session_not_found, the passkey as it was', async (t) => {
  const ended = { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' };
  const state = async (passkeyId: string) => {
    const { rows } = await api.db.query(
      `select (select array_agg(friendly_name) from webauthn_credentials where id = $1) as names,
              (select count(*)::int from audit_log_entries where payload->'traits'->>'passkey_id' = $1::text
                 and payload->>'action' in ('passkey_updated', 'passkey_deleted')) as audited`,
      [passkeyId],
    );
    return rows[0];
  };
  for (const method of ['PATCH', 'DELETE'] as const) {
    const session = await signUp(api);
    const token = session.access_token;
    const { body: passkey } = await register(api, token, newAuthenticator());
    const before = await state(passkey.id);
    t.equal(before.names.length, 1);
    // The test holds the user's row and the passkey's: the request waits at whichever it takes first.
    const reply = await afterSessionEnded(
      api,
      session.user.id,
      token,
      () => api.request(method, `/passkeys/${passkey.id}`, { token, body: method === 'PATCH' ? { friendly_name: 'late' } : undefined }),
      { table: 'webauthn_credentials', id: passkey.id },
    );
    t.strictSame([reply.status, reply.body], [403, ended], method);
    t.strictSame(await state(passkey.id), before, `${method}: not renamed or deleted, nothing audited`);
  }
});

t.test('a user deleted while a registration waits for its row: 403 user_not_found and no passkey, not a 500', async (t) => {
  const gone = { code: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' };
  for (const soft of [false, true]) {
    const label = soft ? 'soft-deleted' : 'deleted';
    const session = await signUp(api);
    const token = session.access_token;
    const started = await api.request('POST', '/passkeys/registration/options', { token, body: {} });
    const credential = newAuthenticator().create(started.body.options);
    const deletion = () => api.request('DELETE', `/admin/users/${session.user.id}`, { token: admin, body: { should_soft_delete: soft } });
    // Options and verify each found the user at the bearer check, then wait for its row behind the deletion.
    const [deleted, options, verified] = await inOrderBehindUserLock(api.db, session.user.id, [
      deletion,
      () => api.request('POST', '/passkeys/registration/options', { token, body: {} }),
      () => api.request('POST', '/passkeys/registration/verify', { token, body: { challenge_id: started.body.challenge_id, credential } }),
    ]);
    t.equal(deleted.status, 200);
    t.strictSame([options.status, options.body], [403, gone], `${label}: options`);
    t.strictSame([verified.status, verified.body], [403, gone], `${label}: verify`);
    const left = await api.db.query('select count(*)::int as n from webauthn_credentials where user_id = $1', [session.user.id]);
    t.equal(left.rows[0].n, 0, `${label}: no passkey`);
  }
});

t.test("a rename or deletion beside its user's deletion: 403 user_not_found, not a deadlock 500", async (t) => {
  const gone = { code: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' };
  for (const soft of [false, true]) {
    for (const method of ['PATCH', 'DELETE'] as const) {
      const label = `${soft ? 'soft-deleted' : 'deleted'}: ${method}`;
      const session = await signUp(api);
      const token = session.access_token;
      const { body: passkey } = await register(api, token, newAuthenticator());
      // The request found the user at the bearer check, then waits for its row behind the deletion.
      const res = await behindDeletion(api, session.user.id, soft, () =>
        api.request(method, `/passkeys/${passkey.id}`, { token, body: method === 'PATCH' ? { friendly_name: 'late' } : undefined }),
      );
      t.strictSame([res.status, res.body], [403, gone], label);
      const audited = await api.db.query(
        `select 1 from audit_log_entries where payload->'traits'->>'passkey_id' = $1::text and payload->>'action' in ('passkey_updated', 'passkey_deleted')`,
        [passkey.id],
      );
      t.equal(audited.rowCount, 0, `${label}: nothing audited`);
    }
  }
});

t.test("a passkey sign-in beside its user's deletion: refused, not a deadlock 500", async (t) => {
  for (const soft of [false, true]) {
    const session = await signUp(api);
    const authenticator = newAuthenticator();
    t.equal((await register(api, session.access_token, authenticator)).status, 200);
    const { challenge_id, options } = await authenticationOptions(api);
    const credential = authenticator.get(options);
    // The sign-in found the user and its passkey, then waits for the user's row behind the deletion.
    const res = await behindDeletion(api, session.user.id, soft, () =>
      api.request('POST', '/passkeys/authentication/verify', { body: { challenge_id, credential } }),
    );
    t.strictSame(
      [res.status, res.body],
      [400, { code: 400, error_code: 'webauthn_verification_failed', msg: 'Credential verification failed' }],
      soft ? 'soft-deleted' : 'deleted',
    );
    const sessions = await api.db.query('select count(*)::int as n from sessions where user_id = $1', [session.user.id]);
    t.equal(sessions.rows[0].n, 0, 'no session');
  }
});

t.test('SSO users cannot register; a user whose email is no longer confirmed cannot sign in', async (t) => {
  const sso = await signUp(api);
  await api.db.query('update users set is_sso_user = true where id = $1', [sso.user.id]);
  const refused = await api.request('POST', '/passkeys/registration/options', { token: sso.access_token, body: {} });
  t.same(refused.body, { code: 422, error_code: 'validation_failed', msg: 'SSO users cannot register passkeys' });

  const session = await signUp(api);
  const authenticator = newAuthenticator();
  t.equal((await register(api, session.access_token, authenticator)).status, 200);
  await api.db.query('update users set email_confirmed_at = null where id = $1', [session.user.id]);
  const res = await signInWithPasskey(api, authenticator);
  t.same(res.body, { code: 403, error_code: 'email_not_confirmed', msg: 'Email not confirmed' });
});
