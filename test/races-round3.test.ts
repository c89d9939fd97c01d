// Races of identities, MFA, SSO provider creation, OAuth grant revocation and admin user creation, put in a
// fixed order rather than left to chance (test/helpers/row-lock.ts): the test holds a lock, queues the
// requests behind it in a chosen order, lets them go, then checks both the answers and the rows. Each
// request must answer as it would sent after the others, and the rows must keep their invariants: a user
// keeps at least one identity, an identity belongs to one user, MFA limits hold, a challenge is spent once,
// an email or phone names one user, a revoked grant leaves its app no session.
import t from 'tap';
import pg from 'pg';
import { startTestService, type Reply } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { confirmedUser } from './helpers/users.js';
import { challenge, enrollTotp, totpCode } from './helpers/mfa.js';
import { afterSessionEnded, holdLock, inOrderBehind, inOrderBehindUserLock } from './helpers/row-lock.js';
import { TestIdp, spPrivateKey } from './helpers/saml-idp.js';
import { githubPerson, startGithubFake } from './helpers/github.js';
import { callback, fragmentOf, githubEnv } from './helpers/oauth.js';
import {
  APP_REDIRECT,
  approvedCode,
  authorizationIdOf,
  authorize,
  basic,
  oauthServerEnv,
  startFlow,
  tokenRequest,
} from './helpers/oauth-server.js';

const gh = await startGithubFake();
const api = await startTestService({
  ...githubEnv(gh),
  AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
  AUTH_MFA_MAX_ENROLLED_FACTORS: '3',
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
});
const oauthApi = await startTestService(oauthServerEnv());
t.teardown(async () => {
  await api.stop();
  await oauthApi.stop();
  await gh.stop();
});
const admin = await adminToken();

const answer = (r: Reply) => [r.status, r.body];
/** Answers in an order independent of which request won. */
const unordered = (answers: unknown[][]) => answers.map((a) => JSON.stringify(a)).sort();
const error = (code: number, errorCode: string, msg: string) => [code, { code, error_code: errorCode, msg }];

t.test('DELETE /user/identities: concurrent unlinks of both identities leave one; the second is refused as the last', async (t) => {
  const s = await confirmedUser(api);
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1, $2, $3, 'github')`, [
    `gh-${s.user.id}`,
    s.user.id,
    { sub: `gh-${s.user.id}`, email: s.user.email },
  ]);
  const { rows: identities } = await api.db.query('select id, provider from identities where user_id = $1 order by provider', [s.user.id]);
  t.strictSame(
    identities.map((i) => i.provider),
    ['email', 'github'],
  );
  const unlink = (id: string) => () => api.request('DELETE', `/user/identities/${id}`, { token: s.access_token });
  const replies = await inOrderBehindUserLock(
    api.db,
    s.user.id,
    identities.map((i) => unlink(i.id)),
  );
  t.strictSame(replies.map(answer), [
    [200, {}],
    error(422, 'single_identity_not_deletable', 'User must have at least 1 identity after unlinking'),
  ]);
  const { rows: left } = await api.db.query('select provider from identities where user_id = $1', [s.user.id]);
  t.strictSame(
    left.map((i) => i.provider),
    ['github'],
    'the identity the refused request named is kept',
  );
  const { rows: audit } = await api.db.query(
    `select count(*)::int as n from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' = 'identity_unlinked'`,
    [s.user.id],
  );
  t.equal(audit[0].n, 1, 'one unlink audited');
});

const SESSION_NOT_FOUND = error(403, 'session_not_found', 'Session from session_id claim in JWT does not exist');

/** What the user's own writes (unlink, MFA) change: identities, factors, providers, and what they audited. */
async function userState(userId: string): Promise<unknown> {
  const { rows } = await api.db.query(
    `select u.email, u.raw_app_meta_data,
            (select json_agg(i.provider order by i.provider) from identities i where i.user_id = u.id) as identities,
            (select json_agg(f.id order by f.id) from mfa_factors f where f.user_id = u.id) as factors,
            (select json_agg(a.payload->>'action' order by a.created_at, a.id) from audit_log_entries a
              where a.payload->>'actor_id' = u.id::text) as audited
       from users u where u.id = $1`,
    [userId],
  );
  return rows[0];
}

t.test('DELETE /user/identities: a session ended while it waits for the user: 403 session_not_found, nothing unlinked', async (t) => {
  const s = await confirmedUser(api);
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1, $2, $3, 'github')`, [
    `gh-${s.user.id}`,
    s.user.id,
    { sub: `gh-${s.user.id}`, email: s.user.email },
  ]);
  const { rows } = await api.db.query(`select id from identities where user_id = $1 and provider = 'github'`, [s.user.id]);
  const before = await userState(s.user.id);
  const reply = await afterSessionEnded(api, s.user.id, s.access_token, () =>
    api.request('DELETE', `/user/identities/${rows[0].id}`, { token: s.access_token }),
  );
  t.strictSame(answer(reply), SESSION_NOT_FOUND);
  t.strictSame(await userState(s.user.id), before, 'the identity, the providers and the audit log as they were');
});

t.test('POST /factors: a session ended while it waits for the user: 403 session_not_found, no factor enrolled', async (t) => {
  const s = await confirmedUser(api);
  const before = await userState(s.user.id);
  const reply = await afterSessionEnded(api, s.user.id, s.access_token, () =>
    api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'late' } }),
  );
  t.strictSame(answer(reply), SESSION_NOT_FOUND);
  t.strictSame(await userState(s.user.id), before, 'no factor, nothing audited');
});

t.test('DELETE /factors/{id}: a session ended while it waits for the user: 403 session_not_found, the factor kept', async (t) => {
  const s = await confirmedUser(api);
  const factor = await enrollTotp(api, s.access_token, 'kept');
  const before = await userState(s.user.id);
  const reply = await afterSessionEnded(api, s.user.id, s.access_token, () =>
    api.request('DELETE', `/factors/${factor.id}`, { token: s.access_token }),
  );
  t.strictSame(answer(reply), SESSION_NOT_FOUND);
  t.strictSame(await userState(s.user.id), before, 'the factor kept, nothing audited');
});

t.test('POST /factors: concurrent enrolments never exceed MFA_MAX_ENROLLED_FACTORS', async (t) => {
  const s = await confirmedUser(api);
  await enrollTotp(api, s.access_token, 'first');
  const enroll = (name: string) => () =>
    api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: name } });
  const replies = await inOrderBehindUserLock(api.db, s.user.id, [enroll('a'), enroll('b'), enroll('c')]);
  t.strictSame(
    replies.map((r) => r.status),
    [200, 200, 422],
  );
  t.equal(replies[2].body.error_code, 'too_many_enrolled_mfa_factors');
  const { rows } = await api.db.query('select friendly_name from mfa_factors where user_id = $1 order by friendly_name', [s.user.id]);
  t.strictSame(
    rows.map((r) => r.friendly_name),
    ['a', 'b', 'first'],
  );
});

t.test('POST /factors: concurrent enrolments under one friendly name make one factor, the other 422 as a repeat', async (t) => {
  const s = await confirmedUser(api);
  const enroll = () => api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'totp', friendly_name: 'same' } });
  const replies = await inOrderBehindUserLock(api.db, s.user.id, [enroll, enroll]);
  t.equal(replies[0].status, 200, replies[0].text);
  const again = await enroll();
  t.equal(again.status, 422);
  t.strictSame(answer(replies[1]), answer(again), 'as a sequential repeat');
  const { rows } = await api.db.query('select count(*)::int as n from mfa_factors where user_id = $1', [s.user.id]);
  t.equal(rows[0].n, 1);
});

t.test('POST /factors/{id}/verify: concurrent verifications of one challenge spend it once', async (t) => {
  const s = await confirmedUser(api);
  const factor = await enrollTotp(api, s.access_token);
  const c = await challenge(api, s.access_token, factor.id);
  const code = totpCode(factor.totp.secret);
  const verify = () =>
    api.request('POST', `/factors/${factor.id}/verify`, { token: s.access_token, body: { challenge_id: c.body.id, code } });
  const replies = await inOrderBehindUserLock(api.db, s.user.id, [verify, verify]);
  t.equal(replies[0].status, 200, replies[0].text);
  const again = await verify();
  t.strictSame(answer(again), error(422, 'mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.'));
  t.strictSame(answer(replies[1]), answer(again), 'the second is refused as a sequential repeat');
  const { rows } = await api.db.query(
    `select count(*)::int as n from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' = 'verification_attempted'`,
    [s.user.id],
  );
  t.equal(rows[0].n, 1, 'one verification audited');
  const { rows: sessions } = await api.db.query(`select aal from sessions where user_id = $1`, [s.user.id]);
  t.strictSame(
    sessions.map((r) => r.aal),
    ['aal2'],
  );
});

t.test('POST /factors/{id}/verify: of two unverified factors verified at once, the second is the 404 of a factor gone', async (t) => {
  const s = await confirmedUser(api);
  const [a, b] = [await enrollTotp(api, s.access_token, 'a'), await enrollTotp(api, s.access_token, 'b')];
  const [ca, cb] = [await challenge(api, s.access_token, a.id), await challenge(api, s.access_token, b.id)];
  const verify = (factor: typeof a, challengeId: string) => () =>
    api.request('POST', `/factors/${factor.id}/verify`, {
      token: s.access_token,
      body: { challenge_id: challengeId, code: totpCode(factor.totp.secret) },
    });
  // Verifying one factor removes the user's other unverified factors of its type (docs/mfa.md).
  const replies = await inOrderBehindUserLock(api.db, s.user.id, [verify(a, ca.body.id), verify(b, cb.body.id)]);
  t.equal(replies[0].status, 200, replies[0].text);
  const again = await verify(b, cb.body.id)();
  t.strictSame(answer(again), error(404, 'mfa_factor_not_found', 'Factor not found'));
  t.strictSame(answer(replies[1]), answer(again), 'as a verification sent after the first');
  const { rows } = await api.db.query('select friendly_name, status from mfa_factors where user_id = $1', [s.user.id]);
  t.strictSame(rows, [{ friendly_name: 'a', status: 'verified' }]);
});

for (const [field, body, expected] of [
  [
    'email',
    (x: string) => ({ email: `${x}@example.com` }),
    error(422, 'email_exists', 'A user with this email address has already been registered'),
  ],
  [
    'phone',
    (x: string) => ({ phone: `1415555${x.slice(-4)}` }),
    error(422, 'phone_exists', 'Phone number already registered by another user'),
  ],
] as const) {
  t.test(`POST /admin/users: concurrent creates with one ${field} make one user; the other is the 422 of a repeat`, async (t) => {
    const tag = `${Date.now() % 10000}`.padStart(4, '0');
    const create = () => api.request('POST', '/admin/users', { token: admin, body: body(`race-admin-${tag}`) });
    // Both pass their look-ups (nobody holds the address yet), then wait to insert: the table's share lock
    // lets reads through and holds writes. Let go together, either may insert first.
    const held = await holdLock(api.db, 'lock table users in share mode');
    const replies = await inOrderBehind(held, [create, create]);
    const [won] = replies.filter((r) => r.status === 200);
    t.ok(won, 'one is created');
    t.strictSame(unordered(replies.map((r) => (r === won ? [200] : answer(r)))), unordered([[200], expected]));
    t.strictSame(answer(await create()), expected, 'as a sequential repeat');
    const column = field === 'email' ? 'email' : 'phone';
    const value = field === 'email' ? body(`race-admin-${tag}`).email : body(`race-admin-${tag}`).phone;
    const { rows } = await api.db.query(`select count(*)::int as n from users where ${column} = $1`, [value]);
    t.equal(rows[0].n, 1, 'one user');
  });
}

/**
 * POST /admin/sso/providers, with `meanwhile` run (in a transaction of the test's own) between the create's
 * commit and anything the request does after it: the test first holds the providers' table so that the
 * create waits to insert, then queues an exclusive lock on sso_domains behind the share lock the create's
 * look-ups took there (PostgreSQL lets the create's own insert go ahead of that queued lock, as it already
 * holds the table), and is granted it as the create commits: any read of a provider after the commit then
 * waits until `meanwhile` has committed.
 */
async function createWithMeanwhile(body: Record<string, unknown>, meanwhile: (c: pg.Client) => Promise<void>): Promise<Reply> {
  const held = await holdLock(api.db, 'lock table sso_providers in share mode');
  // A connection apart from the pool's two: one holds the lock, the other counts the waiters.
  const after = new pg.Client(api.db.options);
  await after.connect();
  let reply!: Promise<Reply>;
  try {
    reply = api.request('POST', '/admin/sso/providers', { token: admin, body });
    reply.catch(() => undefined);
    await held.waiters(1);
    await after.query('begin');
    const taken = after.query('lock table sso_domains in access exclusive mode');
    taken.catch(() => undefined);
    await held.waiters(2);
    await held.release();
    await taken;
    await meanwhile(after);
    await after.query('commit');
  } catch (err) {
    await after.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    await after.end();
    await held.release();
  }
  return reply;
}

for (const [what, meanwhile] of [
  ['deleted', 'delete from sso_providers p using saml_providers s where s.sso_provider_id = p.id and s.entity_id = $1'],
  [
    'disabled',
    'update sso_providers p set disabled = true, resource_id = $1 from saml_providers s where s.sso_provider_id = p.id and s.entity_id = $1',
  ],
] as const) {
  t.test(`POST /admin/sso/providers: a provider ${what} just after its create commits is answered as created`, async (t) => {
    const idp = new TestIdp();
    const domain = `round3-${what}.example.test`;
    const reply = await createWithMeanwhile({ type: 'saml', metadata_xml: idp.metadata(), domains: [domain] }, async (c) => {
      await c.query(meanwhile, [idp.entityId]);
    });
    t.equal(reply.status, 201, reply.text);
    t.equal(reply.body.saml?.entity_id, idp.entityId);
    t.strictSame(
      reply.body.domains?.map((d: { domain: string }) => d.domain),
      [domain],
    );
    t.notOk(reply.body.disabled, 'the provider as this request created it');
    t.equal(reply.body.resource_id ?? null, null);
  });
}

t.test('manual linking: two users completing the link of one GitHub account at once; it ends on the first only', async (t) => {
  const [first, second] = [await confirmedUser(api), await confirmedUser(api)];
  gh.users.set(9301, githubPerson(9301, 'linked-twice@example.com'));
  gh.approveAs = 9301;
  /** The provider's answer for a link flow the user started, ready to be replayed at /callback. */
  const approvedLink = async (token: string) => {
    const start = await api.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', { token });
    if (start.status !== 200) throw new Error(`authorize answered ${start.status}: ${start.text}`);
    return gh.approve(start.body.url);
  };
  const [params1, params2] = [await approvedLink(first.access_token), await approvedLink(second.access_token)];
  // Each finds no identity yet: the first then waits to insert it (the table's share lock lets reads
  // through and holds writes), the second on the first's lock of the identity's key.
  const held = await holdLock(api.db, 'lock table identities in share mode');
  const [won, lost] = await inOrderBehind(held, [() => callback(api, params1), () => callback(api, params2)]);
  t.notOk(fragmentOf(won.location).error_code, won.location.href);
  t.equal(fragmentOf(lost.location).error_code, 'identity_already_exists');
  t.equal(fragmentOf(lost.location).error_description, 'Identity is already linked to another user');
  const again = await callback(api, await approvedLink(second.access_token));
  t.strictSame(fragmentOf(lost.location), fragmentOf(again.location), 'as a link made after the first');
  const { rows } = await api.db.query(`select user_id from identities where provider = 'github' and provider_id = '9301'`);
  t.strictSame(
    rows.map((r) => r.user_id),
    [first.user.id],
  );
});

const sessionsOf = async (userId: string, clientId: string): Promise<number> =>
  (await oauthApi.db.query(`select count(*)::int as n from sessions where user_id = $1 and oauth_client_id = $2`, [userId, clientId]))
    .rows[0].n;

const INVALID_CODE = { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid authorization code' } };

t.test('DELETE /user/oauth/grants: a code approved before the revoke is refused after it', async (t) => {
  const { client, user, exchange, revoke } = await approvedCode(oauthApi);
  const revoked = await revoke();
  t.equal(revoked.status, 204, revoked.text);
  t.strictSame(await exchange(), INVALID_CODE, 'as a code already used');
  t.equal(await sessionsOf(user.id, client.client_id), 0);
});

t.test('DELETE /user/oauth/grants while the code is being exchanged: no session of the app survives the revoke', async (t) => {
  const { client, user, exchange, revoke } = await approvedCode(oauthApi);
  // The exchange locks and spends its code, then waits on the user's row to record the sign-in; the revoke
  // runs meanwhile: to its end, or until it waits for the exchange.
  const held = await holdLock(oauthApi.db, 'select 1 from users where id = $1 for update', [user.id]);
  const revoking = { settled: false };
  let exchanged!: Promise<{ status: number; body: any }>;
  let revoked!: Promise<Reply>;
  try {
    exchanged = exchange();
    exchanged.catch(() => undefined);
    await held.waiters(1);
    revoked = revoke().finally(() => (revoking.settled = true));
    revoked.catch(() => undefined);
    await held.waiters(2, revoking);
  } finally {
    await held.release();
  }
  const [revokeReply, raced] = await Promise.all([revoked, exchanged]);
  t.equal(revokeReply.status, 204, revokeReply.text);
  if (raced.status === 200) {
    const me = await oauthApi.request('GET', '/user', { token: raced.body.access_token });
    t.equal(me.status, 403, 'the access token names a session the revoke ended');
  } else t.strictSame(raced, INVALID_CODE, 'refused as after the revoke');
  t.equal(await sessionsOf(user.id, client.client_id), 0, 'no session of the app survives');
});

t.test('DELETE /user/oauth/grants while an earlier consent approves a new request: its code does not outlive the revoke', async (t) => {
  const { client, config, user, accessToken, exchange, revoke } = await approvedCode(oauthApi);
  t.equal((await exchange()).status, 200);
  const flow = await startFlow(config, 'email');
  const authorizationId = authorizationIdOf((await authorize(flow.url)).location);
  // The test holds the consent: the showing of the new request (which approves it at once on that consent)
  // queues first, the revoke second.
  const held = await holdLock(oauthApi.db, 'select 1 from oauth_consents where user_id = $1 and client_id = $2 for update', [
    user.id,
    client.client_id,
  ]);
  const showing = { settled: false };
  let shown!: Promise<Reply>;
  let revoked!: Promise<Reply>;
  try {
    shown = oauthApi
      .request('GET', `/oauth/authorizations/${authorizationId}`, { token: accessToken })
      .finally(() => (showing.settled = true));
    shown.catch(() => undefined);
    await held.waiters(1, showing);
    revoked = revoke();
    revoked.catch(() => undefined);
    await held.waiters(showing.settled ? 1 : 2);
  } finally {
    await held.release();
  }
  const [showReply, revokeReply] = await Promise.all([shown, revoked]);
  t.equal(revokeReply.status, 204, revokeReply.text);
  t.equal(showReply.status, 200, showReply.text);
  const redirect = showReply.body.redirect_url;
  t.ok(redirect, 'approved at once on the consent the revoke had not yet ended');
  const code = new URL(redirect).searchParams.get('code')!;
  const late = await tokenRequest(
    oauthApi,
    { grant_type: 'authorization_code', code, code_verifier: flow.verifier, redirect_uri: APP_REDIRECT },
    basic(client.client_id, client.client_secret!),
  );
  t.strictSame(late, INVALID_CODE, 'the code approved before the revoke is discarded with the grant');
  t.equal(await sessionsOf(user.id, client.client_id), 0, 'no session of the app survives');
});

const authorizationState = async (authorizationId: string) =>
  (
    await oauthApi.db.query(
      `select status, user_id, authorization_code is not null as has_code from oauth_authorizations where authorization_id = $1`,
      [authorizationId],
    )
  ).rows[0];
const consentScopes = async (userId: string, clientId: string) =>
  (await oauthApi.db.query(`select scopes from oauth_consents where user_id = $1 and client_id = $2`, [userId, clientId])).rows.map(
    (r) => r.scopes,
  );

t.test('POST /oauth/authorizations/{id}/consent: a session ended while it waits for the user: 403, no code issued', async (t) => {
  const { client, config, user, accessToken, exchange } = await approvedCode(oauthApi);
  t.equal((await exchange()).status, 200);
  // More than the stored consent covers: the request waits for the user's decision.
  const flow = await startFlow(config, 'email profile');
  const authorizationId = authorizationIdOf((await authorize(flow.url)).location);
  const shown = await oauthApi.request('GET', `/oauth/authorizations/${authorizationId}`, { token: accessToken });
  t.equal(shown.body.authorization_id, authorizationId, shown.text);
  const reply = await afterSessionEnded(oauthApi, user.id, accessToken, () =>
    oauthApi.request('POST', `/oauth/authorizations/${authorizationId}/consent`, { token: accessToken, body: { action: 'approve' } }),
  );
  t.strictSame(answer(reply), SESSION_NOT_FOUND);
  t.strictSame(await authorizationState(authorizationId), { status: 'pending', user_id: user.id, has_code: false }, 'no code');
  t.strictSame(await consentScopes(user.id, client.client_id), ['email'], 'the consent as it was');
});

t.test(
  'GET /oauth/authorizations/{id} on a covering consent: a session ended while it waits for the user: 403, no code issued',
  async (t) => {
    const { client, config, user, accessToken, exchange } = await approvedCode(oauthApi);
    t.equal((await exchange()).status, 200);
    // Covered by the stored consent: the showing would approve it at once.
    const flow = await startFlow(config, 'email');
    const authorizationId = authorizationIdOf((await authorize(flow.url)).location);
    const reply = await afterSessionEnded(oauthApi, user.id, accessToken, () =>
      oauthApi.request('GET', `/oauth/authorizations/${authorizationId}`, { token: accessToken }),
    );
    t.strictSame(answer(reply), SESSION_NOT_FOUND);
    t.strictSame(await authorizationState(authorizationId), { status: 'pending', user_id: null, has_code: false }, 'unclaimed, no code');
    t.strictSame(await consentScopes(user.id, client.client_id), ['email']);
  },
);
