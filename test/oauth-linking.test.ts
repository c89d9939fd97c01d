// Who an OAuth sign-in becomes (REFERENCE §9.4) and how every failure reaches the app (REFERENCE §9.5), with
// GitHub played by a local server speaking its wire format: linking by verified email only, the takeover of a
// pre-registered unconfirmed account refused, invites accepted, bans and bad states in the redirect.
import t from 'tap';
import net from 'node:net';
import { startTestService } from './helpers/server.js';
import { startGithubFake, type GithubUser } from './helpers/github.js';
import { REDIRECT_URI } from './helpers/oidc-provider.js';
import { adminToken } from './helpers/admin.js';
import { confirmedUser } from './helpers/users.js';
import { authorizeUrl, callback, fragmentOf, providerEnv, queryOf, githubEnv } from './helpers/oauth.js';

const gh = await startGithubFake();
const api = await startTestService({
  ...githubEnv(gh),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
  // enabled without credentials: a warning at start, then treated as disabled
  AUTH_EXTERNAL_AZURE_ENABLED: 'true',
  AUTH_EXTERNAL_AZURE_SECRET: 'azure-secret',
  AUTH_INTERNAL_HTTP_TIMEOUT: '1',
});
t.teardown(async () => {
  await api.stop();
  await gh.stop();
});

let nextId = 1000;
function githubUser(email: string, verified: boolean): GithubUser {
  const user: GithubUser = {
    id: ++nextId,
    login: `user${nextId}`,
    name: `User ${nextId}`,
    avatar_url: `https://avatars.example.test/${nextId}`,
    emails: [{ email, primary: true, verified, visibility: 'public' }],
  };
  gh.users.set(user.id, user);
  return user;
}

/** The whole round trip as a browser makes it: /authorize, GitHub's consent, /callback. */
async function signInWithGithub(user: GithubUser, query = '') {
  gh.approveAs = user.id;
  const url = await authorizeUrl(api, `provider=github&redirect_to=https://app.example.test/done${query}`);
  return callback(api, await gh.approve(url.href));
}

const userByEmail = async (email: string) =>
  (await api.db.query('select id, encrypted_password, email_confirmed_at from users where email = $1', [email])).rows[0];
const identitiesOf = async (userId: string) =>
  (await api.db.query('select provider from identities where user_id = $1 order by provider', [userId])).rows.map((r) => r.provider);

t.test('an enabled provider missing credentials: named in one start-up warning, false in /settings, refused by /authorize', async (t) => {
  const warnings = api.logs().filter((l) => l.level === 'warning' && String(l.msg).includes('not fully configured'));
  t.equal(warnings.length, 1);
  t.same(warnings[0].providers, ['azure: missing OAuth client ID']);
  const settings = await api.request('GET', '/settings');
  t.equal(settings.body.external.azure, false);
  t.equal(settings.body.external.github, true);
  const res = await api.request('GET', '/authorize?provider=azure');
  t.same(res.body, { code: 400, error_code: 'validation_failed', msg: 'Unsupported provider: missing OAuth client ID' });
});

t.test('a verified GitHub address equal to a confirmed account links to it', async (t) => {
  const signup = await api.request('POST', '/signup', { body: { email: 'lena@example.com', password: 'Secret-password-1' } });
  await api.db.query('update users set email_confirmed_at = now() where id = $1', [signup.body.id]);
  const { location } = await signInWithGithub(githubUser('lena@example.com', true));
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.id, signup.body.id, 'the same account');
  t.same(await identitiesOf(signup.body.id), ['email', 'github']);
  t.same(me.body.app_metadata.providers, ['email', 'github']);
  t.match(
    me.body.user_metadata,
    { name: /^User \d+$/, avatar_url: /^https:\/\/avatars\.example\.test\//, email: 'lena@example.com', email_verified: true },
    "the link merges the provider's claims into user_metadata, as the original's",
  );
  const login = await api.request('POST', '/token?grant_type=password', {
    body: { email: 'lena@example.com', password: 'Secret-password-1' },
  });
  t.equal(login.status, 200, 'the owner keeps the password of a confirmed account');
  const identity = (
    await api.db.query("select id, provider_id from identities where user_id = $1 and provider = 'github'", [signup.body.id])
  ).rows[0];
  const audit = await api.db.query(
    "select payload, ip_address from audit_log_entries where payload->>'action' = 'identity_linked' and payload->>'actor_id' = $1",
    [signup.body.id],
  );
  t.equal(audit.rowCount, 1, 'the automatic link is audited once');
  t.equal(audit.rows[0].payload.log_type, 'user', "the original's log type for identity changes");
  t.same(audit.rows[0].payload.traits, { identity_id: identity.id, provider: 'github', provider_id: identity.provider_id });
  t.equal(audit.rows[0].ip_address, '127.0.0.1', 'with the address of the request that linked it');
  await signInWithGithub(gh.users.get(Number(identity.provider_id))!);
  const again = await api.db.query(
    "select 1 from audit_log_entries where payload->>'action' = 'identity_linked' and payload->>'actor_id' = $1",
    [signup.body.id],
  );
  t.equal(again.rowCount, 1, 'signing in again with the linked identity is not another link');
});

t.test(
  'takeover refused: a pre-registered unconfirmed account loses its password and identities before the provider confirms it',
  async (t) => {
    const attacker = await api.request('POST', '/signup', {
      body: { email: 'victim@example.com', password: 'Attackers-password-1', data: { planted: 'by the attacker' } },
    });
    t.equal(attacker.status, 200);
    const tokensOf = async (id: string) =>
      (await api.db.query('select token_type from one_time_tokens where user_id = $1', [id])).rows.map((r) => r.token_type);
    t.same(await tokensOf(attacker.body.id), ['confirmation_token'], "the sign-up's confirmation link is pending");
    const { location } = await signInWithGithub(githubUser('victim@example.com', true));
    const session = fragmentOf(location);
    t.ok(session.access_token, location.href);
    const row = await userByEmail('victim@example.com');
    t.equal(row.id, attacker.body.id, 'the address stays with its one account');
    t.equal(row.encrypted_password, null, "the attacker's password is gone");
    t.ok(row.email_confirmed_at, 'confirmed by the verified provider address');
    t.same(await identitiesOf(row.id), ['github'], 'the unverified email identity is gone');
    t.same(await tokensOf(row.id), [], 'and every pending link with it, as the original confirms an account');
    const meta = (await api.db.query('select raw_user_meta_data as m from users where id = $1', [row.id])).rows[0].m;
    t.notOk('planted' in meta, "the sign-up's metadata is replaced by the provider's claims");
    t.match(meta, { email: 'victim@example.com', email_verified: true, name: /^User \d+$/ });
    const login = await api.request('POST', '/token?grant_type=password', {
      body: { email: 'victim@example.com', password: 'Attackers-password-1' },
    });
    t.equal(login.status, 400);
    t.equal(login.body.error_code, 'invalid_credentials');
  },
);

/** The refusal of a sign-in whose new account is left without an address and the provider did not verify it. */
const VERIFY_AT_PROVIDER = {
  error: 'access_denied',
  error_code: 'provider_email_needs_verification',
  error_description: 'Unverified email with github. Verify the email with github in order to sign in',
};
const accountOfGithubUser = async (user: GithubUser) =>
  (
    await api.db.query(
      `select u.id, u.email, u.email_confirmed_at from identities i join users u on u.id = i.user_id
       where i.provider = 'github' and i.provider_id = $1`,
      [String(user.id)],
    )
  ).rows[0];

t.test('email_verified=false never links: a new account without the address, refused until GitHub verifies it', async (t) => {
  const signup = await api.request('POST', '/signup', { body: { email: 'owner@example.com', password: 'Secret-password-1' } });
  await api.db.query('update users set email_confirmed_at = now() where id = $1', [signup.body.id]);
  const unverified = githubUser('owner@example.com', false);
  const { location } = await signInWithGithub(unverified);
  t.same(queryOf(location), VERIFY_AT_PROVIDER, 'no session: as the original, the provider must verify the address');
  const kept = await accountOfGithubUser(unverified);
  t.not(kept.id, signup.body.id, 'a different account, kept as the original commits it');
  t.strictSame([kept.email, kept.email_confirmed_at], [null, null], 'without the address');
  t.same(await identitiesOf(signup.body.id), ['email'], "the owner's identities are unchanged");
  t.same(queryOf((await signInWithGithub(unverified)).location), VERIFY_AT_PROVIDER, 'refused again at the next sign-in');
  const { location: verified } = await signInWithGithub(githubUser('owner@example.com', true));
  const owner = await api.request('GET', '/user', { token: fragmentOf(verified).access_token });
  t.equal(owner.body.id, signup.body.id, 'a verified address later links to the owner, the unverified identity elsewhere does not count');
});

t.test("an unverified address that is another user's identity email stays with that user: the new account gets none", async (t) => {
  const holder = await confirmedUser(api);
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ($1, $2, $3, 'google')`, [
    `google-${holder.user.id}`,
    holder.user.id,
    { sub: `google-${holder.user.id}`, email: 'held-by-google@example.com', email_verified: true },
  ]);
  const newcomer = githubUser('Held-By-Google@example.com', false);
  const { location } = await signInWithGithub(newcomer);
  t.same(queryOf(location), VERIFY_AT_PROVIDER);
  const kept = await accountOfGithubUser(newcomer);
  t.not(kept.id, holder.user.id, 'a new account');
  t.equal(kept.email, null, 'without the address');
  t.equal(await userByEmail('held-by-google@example.com'), undefined, 'no account took it as its own');
});

t.test('an address held in another audience stays with its owner: the new account gets no email, not a 500', async (t) => {
  // Users are linked within the default audience, but the unique index on email spans them all.
  const other = await api.request('POST', '/signup', {
    body: { email: 'elsewhere@example.com', password: 'Secret-password-1' },
    headers: { 'X-JWT-AUD': 'another-audience' },
  });
  t.equal(other.status, 200);
  const { location } = await signInWithGithub(githubUser('elsewhere@example.com', true));
  const session = fragmentOf(location);
  t.ok(session.access_token, location.href);
  const me = await api.request('GET', '/user', { token: session.access_token });
  t.not(me.body.id, other.body.id, 'a new account');
  t.equal(me.body.email, '', 'without the address');
  t.same(await identitiesOf(me.body.id), ['github']);
  const owner = await api.db.query('select aud, email from users where id = $1', [other.body.id]);
  t.same(owner.rows, [{ aud: 'another-audience', email: 'elsewhere@example.com' }], 'the owner keeps it');
});

t.test('an unverified address nobody holds: provider_email_needs_verification in the redirect, the account kept unconfirmed', async (t) => {
  const { status, location } = await signInWithGithub(githubUser('fresh-unverified@example.com', false));
  t.equal(status, 302);
  t.equal(location.origin + location.pathname, 'https://app.example.test/done');
  const expected = {
    error: 'access_denied',
    error_code: 'provider_email_needs_verification',
    error_description: 'Unverified email with github. A confirmation email has been sent to your github email',
  };
  t.same(queryOf(location), expected, 'in the query');
  t.same(fragmentOf(location), { ...expected, sb: '' }, 'and in the fragment');
  const kept = await userByEmail('fresh-unverified@example.com');
  t.ok(kept, 'the account stays, as the original commits it with the error (test/oauth-unverified-email.test.ts reads the mail)');
  t.equal(kept.email_confirmed_at, null);
  t.same(await identitiesOf(kept.id), ['github']);
});

t.test('an invited user who signs in with the invited address is confirmed as any unconfirmed account is', async (t) => {
  const invited = await api.request('POST', '/invite', {
    token: await adminToken(),
    body: { email: 'guest@example.com', data: { team: 'red' } },
  });
  t.equal(invited.status, 200, invited.text);
  const { location } = await signInWithGithub(githubUser('guest@example.com', true));
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.id, invited.body.id);
  t.ok(me.body.email_confirmed_at);
  // As the original: the unverified email identity the invite made goes, and the provider's claims replace
  // the admin's data.
  t.same(await identitiesOf(invited.body.id), ['github']);
  t.same(me.body.app_metadata, { provider: 'github', providers: ['github'] });
  t.notOk('team' in me.body.user_metadata, "the admin's data is gone");
  t.match(me.body.user_metadata, { name: /^User \d+$/, email: 'guest@example.com', email_verified: true });
  const audit = await api.db.query(
    `select 1 from audit_log_entries where payload->>'action' = 'invite_accepted' and payload->>'actor_id' = $1`,
    [invited.body.id],
  );
  t.equal(audit.rowCount, 0, 'no invite was accepted: no invite_token came with the flow');
});

t.test(
  'invite_token: the invite link token accepts the invite with the provider, even for an address the provider did not verify',
  async (t) => {
    const admin = await adminToken();
    const link = await api.request('POST', '/admin/generate_link', {
      token: admin,
      body: { type: 'invite', email: 'linked-invite@example.com', data: { team: 'blue' } },
    });
    t.equal(link.status, 200, link.text);
    t.match(link.body.user_metadata, { team: 'blue' });
    // A password planted before the invite is accepted goes, as the original's acceptance removes it.
    await api.db.query(`update users set encrypted_password = 'planted' where id = $1`, [link.body.id]);
    const unknown = await api.request('GET', '/authorize?provider=github&invite_token=not-an-invite');
    t.same(unknown.body, { code: 404, error_code: 'user_not_found', msg: 'User identified by token not found' });

    const stranger = githubUser('someone-else@example.com', true);
    const mismatch = await signInWithGithub(stranger, `&invite_token=${link.body.hashed_token}`);
    t.equal(queryOf(mismatch.location).error_description, 'Invited email does not match emails from external provider');

    const person = githubUser('linked-invite@example.com', false);
    const { location } = await signInWithGithub(person, `&invite_token=${link.body.hashed_token}`);
    const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
    t.equal(me.body.id, link.body.id, location.href);
    t.ok(me.body.email_confirmed_at);
    // The original's TestInviteExternalGitlab: the provider is the account's provider, and its only one.
    t.same(await identitiesOf(link.body.id), ['github']);
    t.same(me.body.app_metadata, { provider: 'github', providers: ['github'] });
    t.strictSame(
      me.body.user_metadata,
      { ...me.body.identities[0].identity_data, email_verified: true },
      "user_metadata is the provider's claims, marked verified; the admin's data is gone",
    );
    t.equal(me.body.user_metadata.name, person.name);
    t.equal((await userByEmail('linked-invite@example.com')).encrypted_password, null);
    const audit = await api.db.query(
      `select payload->'traits' as traits from audit_log_entries where payload->>'action' = 'invite_accepted' and payload->>'actor_id' = $1`,
      [link.body.id],
    );
    t.same(
      audit.rows.map((r) => r.traits),
      [{ provider: 'github' }],
    );
    const signIn = await api.db.query(
      `select payload->>'action' as action from audit_log_entries
        where payload->>'actor_id' = $1 and payload->>'action' in ('invite_accepted', 'login', 'user_signedup')`,
      [link.body.id],
    );
    t.same(
      signIn.rows.map((r) => r.action),
      ['invite_accepted'],
      'the acceptance is the sign-in: no login entry beside it, as the original issues the session',
    );
    const spent = await api.request('GET', `/authorize?provider=github&invite_token=${link.body.hashed_token}`);
    t.equal(spent.body.error_code, 'user_not_found', 'the invite is spent');
  },
);

t.test('a banned user: user_banned as access_denied in the redirect', async (t) => {
  const person = githubUser('banned@example.com', true);
  const first = fragmentOf((await signInWithGithub(person)).location);
  t.ok(first.access_token);
  await api.db.query(`update users set banned_until = now() + interval '1 day' where email = 'banned@example.com'`);
  const { location } = await signInWithGithub(person);
  t.same(queryOf(location), { error: 'access_denied', error_code: 'user_banned', error_description: 'User is banned' });
});

t.test('the provider refused (?error=): passed on without error_code', async (t) => {
  const url = await authorizeUrl(api, 'provider=github&redirect_to=https://app.example.test/done');
  const params = new URLSearchParams({
    state: url.searchParams.get('state')!,
    error: 'access_denied',
    error_description: 'The user has denied your application access.',
  });
  const { status, location } = await callback(api, params);
  t.equal(status, 302);
  t.same(queryOf(location), { error: 'access_denied', error_description: 'The user has denied your application access.' });
  t.same(fragmentOf(location), { error: 'access_denied', error_description: 'The user has denied your application access.', sb: '' });
});

t.test('bad states: missing, not a UUID, unknown, expired — 303 to SITE_URL with the error in the query', async (t) => {
  const cases: Array<[string, Record<string, string>]> = [
    ['code=abc', { error: 'invalid_request', error_code: 'bad_oauth_callback', error_description: 'OAuth state parameter missing' }],
    [
      'code=abc&state=eyJhbGciOiJIUzI1NiJ9.e30.tampered',
      { error: 'invalid_request', error_code: 'bad_oauth_state', error_description: 'OAuth state parameter is invalid' },
    ],
    [
      'code=abc&state=6f1c2a44-1b1e-4f0e-9a51-3f9a6d1f0c11',
      { error: 'invalid_request', error_code: 'bad_oauth_state', error_description: 'OAuth state not found or expired' },
    ],
  ];
  for (const [query, expected] of cases) {
    const { status, location } = await callback(api, new URLSearchParams(query));
    t.equal(status, 303, query);
    t.equal(location.origin + location.pathname, 'http://localhost:3000/');
    t.same(queryOf(location), expected, query);
  }
  const url = await authorizeUrl(api, 'provider=github');
  const state = url.searchParams.get('state')!;
  await api.db.query(`update flow_state set created_at = now() - interval '301 seconds' where id = $1`, [state]);
  const expired = await callback(api, new URLSearchParams({ state, code: 'abc' }));
  t.same(queryOf(expired.location), {
    error: 'invalid_request',
    error_code: 'bad_oauth_state',
    error_description: 'OAuth state has expired',
  });
});

t.test('a callback without code, and a code GitHub refuses, land in the redirect too', async (t) => {
  const noCode = await authorizeUrl(api, 'provider=github&redirect_to=https://app.example.test/done');
  const missing = await callback(api, new URLSearchParams({ state: noCode.searchParams.get('state')! }));
  t.equal(missing.status, 302);
  t.same(queryOf(missing.location), {
    error: 'invalid_request',
    error_code: 'bad_oauth_callback',
    error_description: 'OAuth callback with missing authorization code missing',
  });
  t.same(
    fragmentOf(missing.location),
    { ...queryOf(missing.location), sb: '' },
    "the fragment repeats the error, marked with the original's empty sb",
  );
  const badCode = await authorizeUrl(api, 'provider=github&redirect_to=https://app.example.test/done');
  const refused = await callback(api, new URLSearchParams({ state: badCode.searchParams.get('state')!, code: 'wxyz-not-a-code' }));
  t.same(queryOf(refused.location), {
    error: 'server_error',
    error_code: 'unexpected_failure',
    error_description: 'Unable to exchange external code: wxyz',
  });
});

t.test('a provider that never answers: the outbound timeout ends the wait with server_error in the redirect', async (t) => {
  const person = githubUser('slow@example.com', true);
  gh.approveAs = person.id;
  const url = await authorizeUrl(api, 'provider=github&redirect_to=https://app.example.test/done');
  const params = await gh.approve(url.href);
  gh.hangTokenEndpoint = true;
  t.teardown(() => {
    gh.hangTokenEndpoint = false;
  });
  const { status, location } = await callback(api, params);
  t.equal(status, 302);
  t.equal(queryOf(location).error, 'server_error');
  t.match(queryOf(location).error_description, /^Unable to exchange external code: /);
  t.equal((await api.db.query(`select 1 from users where email = 'slow@example.com'`)).rowCount, 0);
});

t.test('a provider slower than the request deadline: /callback still redirects with the error, /authorize refuses in JSON', async (t) => {
  // The provider's own bound far past the request's: without the cap the deadline's JSON 504 always came first.
  const silent = net.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
  const hurried = await startTestService({
    ...githubEnv(gh),
    ...providerEnv('google', { clientId: 'g', secret: 'g-secret', redirectUri: REDIRECT_URI, url: silentUrl }),
    AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
    AUTH_API_MAX_REQUEST_DURATION: '1',
    AUTH_INTERNAL_HTTP_TIMEOUT: '60',
  });
  t.teardown(async () => {
    gh.hangTokenEndpoint = false;
    await hurried.stop();
    silent.close();
  });

  const person = githubUser('hurried@example.com', true);
  gh.approveAs = person.id;
  const params = await gh.approve((await authorizeUrl(hurried, 'provider=github&redirect_to=https://app.example.test/done')).href);
  gh.hangTokenEndpoint = true;
  const { status, location } = await callback(hurried, params);
  t.equal(status, 302);
  t.equal(location.origin + location.pathname, 'https://app.example.test/done');
  t.equal(queryOf(location).error_code, 'unexpected_failure');
  t.match(queryOf(location).error_description, /^Unable to exchange external code: /);
  t.equal((await hurried.db.query(`select 1 from users where email = 'hurried@example.com'`)).rowCount, 0);

  // Google's discovery document from an issuer that never answers: the refusal for an unreachable document.
  const res = await hurried.request('GET', '/authorize?provider=google');
  t.equal(res.status, 400, res.text);
  t.match(res.body, { error_code: 'validation_failed', msg: /^Unsupported provider: / });
});

t.test('redirect_to outside SITE_URL and the allow list falls back to SITE_URL', async (t) => {
  const person = githubUser('redirect@example.com', true);
  gh.approveAs = person.id;
  const url = await authorizeUrl(api, 'provider=github&redirect_to=https://evil.example.com/steal');
  const { location } = await callback(api, await gh.approve(url.href));
  t.equal(location.origin, 'http://localhost:3000');
  t.ok(fragmentOf(location).access_token);
});

t.test('manual linking is off by default: 404 manual_linking_disabled on both identity routes', async (t) => {
  const { access_token: token } = await confirmedUser(api);
  const link = await api.request('GET', '/user/identities/authorize?provider=github', { token });
  t.equal(link.status, 404);
  t.same(link.body, { code: 404, error_code: 'manual_linking_disabled', msg: 'Manual linking is disabled' });
  const unlink = await api.request('DELETE', '/user/identities/6f1c2a44-1b1e-4f0e-9a51-3f9a6d1f0c11', { token });
  t.same(unlink.body, { code: 404, error_code: 'manual_linking_disabled', msg: 'Manual linking is disabled' });
});

t.test("a provider's address in mixed case is stored lower-case in identity_data and user_metadata", async (t) => {
  const { location } = await signInWithGithub(githubUser('Mixed.Case@Example.com', true));
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.email, 'mixed.case@example.com');
  t.equal(me.body.user_metadata.email, 'mixed.case@example.com');
  t.equal(me.body.identities[0].identity_data.email, 'mixed.case@example.com');
});

// --- the original's answers, pinned by its external_*_test.go ---

const auditActions = async (userId: string) =>
  (
    await api.db.query(
      `select payload->>'action' as action from audit_log_entries where payload->>'actor_id' = $1 order by created_at, payload->>'action'`,
      [userId],
    )
  ).rows.map((r) => r.action as string);

t.test('audit: a PKCE callback writes the sign-in (user_signedup, then login), and the code exchange its own login', async (t) => {
  const { createHash, randomBytes } = await import('node:crypto');
  const person = githubUser('pkce-audit@example.com', true);
  const pkceSignIn = async () => {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    gh.approveAs = person.id;
    const url = await authorizeUrl(api, `provider=github&code_challenge=${challenge}&code_challenge_method=s256`);
    const { location } = await callback(api, await gh.approve(url.href));
    return { code: location.searchParams.get('code')!, verifier };
  };
  const first = await pkceSignIn();
  const user = await userByEmail('pkce-audit@example.com');
  t.same(await auditActions(user.id), ['user_signedup'], 'a new account: user_signedup at the callback');
  const exchanged = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: first.code, code_verifier: first.verifier } });
  t.equal(exchanged.status, 200, exchanged.text);
  t.same(await auditActions(user.id), ['user_signedup', 'login'], 'and a login at the exchange');
  await pkceSignIn();
  t.same(await auditActions(user.id), ['user_signedup', 'login', 'login'], 'a returning account: login at the callback');
});

t.test('audit: an unconfirmed account confirmed by the verified provider address is user_signedup, not login', async (t) => {
  const signup = await api.request('POST', '/signup', { body: { email: 'confirm-audit@example.com', password: 'Some-password-1' } });
  t.equal(signup.status, 200, signup.text);
  const { location } = await signInWithGithub(githubUser('confirm-audit@example.com', true));
  t.ok(fragmentOf(location).access_token, location.href);
  const actions = await auditActions(signup.body.id);
  t.ok(actions.includes('user_signedup'), actions.join());
  t.notOk(actions.includes('login'), actions.join());
});

t.test('no address from the provider ends a returning sign-in too, as the original checks it before anything else', async (t) => {
  const person = githubUser('will-vanish@example.com', true);
  t.ok(fragmentOf((await signInWithGithub(person)).location).access_token);
  person.emails = [];
  const { location } = await signInWithGithub(person);
  t.same(queryOf(location), {
    error: 'server_error',
    error_code: 'unexpected_failure',
    error_description: 'Error getting user email from external provider',
  });
});

t.test('a state survives a failed callback (a provider refusal, a bad code) and then signs in once', async (t) => {
  const person = githubUser('retry-state@example.com', true);
  gh.approveAs = person.id;
  const url = await authorizeUrl(api, 'provider=github&redirect_to=https://app.example.test/done');
  const state = url.searchParams.get('state')!;
  const refused = await callback(api, new URLSearchParams({ state, error: 'access_denied', error_description: 'no' }));
  t.equal(queryOf(refused.location).error, 'access_denied');
  const badCode = await callback(api, new URLSearchParams({ state, code: 'wxyz-not-a-code' }));
  t.equal(queryOf(badCode.location).error_code, 'unexpected_failure');
  const approved = await gh.approve(url.href);
  const signedIn = await callback(api, approved);
  t.ok(fragmentOf(signedIn.location).access_token, signedIn.location.href);
  const replay = await callback(api, approved);
  t.equal(queryOf(replay.location).error_code, 'bad_oauth_state', 'spent by its success');
});

t.test("state in the other forms the original's UUID parser reads: braced, urn:uuid:, without hyphens", async (t) => {
  const person = githubUser('state-forms@example.com', true);
  for (const form of [(s: string) => `{${s}}`, (s: string) => `urn:uuid:${s}`, (s: string) => s.replaceAll('-', '').toUpperCase()]) {
    gh.approveAs = person.id;
    const params = await gh.approve((await authorizeUrl(api, 'provider=github')).href);
    params.set('state', form(params.get('state')!));
    const { location } = await callback(api, params);
    t.ok(fragmentOf(location).access_token, `${params.get('state')}: ${location.href}`);
  }
});

t.test('several accounts holding the verified address: the 500 names the linking domain', async (t) => {
  await confirmedUser(api, 'shared@example.com');
  const other = githubUser('other-shared@example.com', true);
  const otherUser = fragmentOf((await signInWithGithub(other)).location);
  t.ok(otherUser.access_token);
  await api.db.query(
    `update identities set identity_data = identity_data || '{"email":"shared@example.com","email_verified":true}' where provider_id = $1`,
    [String(other.id)],
  );
  const { location } = await signInWithGithub(githubUser('shared@example.com', true));
  t.same(queryOf(location), {
    error: 'server_error',
    error_code: 'unexpected_failure',
    error_description: 'Multiple accounts with the same email address in the same linking domain detected: default',
  });
});

t.test('an invite gone between /authorize and the callback: 404 invite_not_found "Invite not found" in the redirect', async (t) => {
  const link = await api.request('POST', '/admin/generate_link', {
    token: await adminToken(),
    body: { type: 'invite', email: 'gone-invite@example.com' },
  });
  t.equal(link.status, 200, link.text);
  gh.approveAs = githubUser('gone-invite@example.com', true).id;
  const url = await authorizeUrl(api, `provider=github&redirect_to=https://app.example.test/done&invite_token=${link.body.hashed_token}`);
  await api.db.query('delete from one_time_tokens where user_id = $1', [link.body.id]);
  const { location } = await callback(api, await gh.approve(url.href));
  t.same(queryOf(location), { error: 'server_error', error_code: 'invite_not_found', error_description: 'Invite not found' });
});

t.test('GET /authorize: an unknown code_challenge_method is "Invalid code_challenge_method", checked after the challenge', async (t) => {
  const long = 'a'.repeat(43);
  const unknown = await api.request('GET', `/authorize?provider=github&code_challenge=${long}&code_challenge_method=md5`);
  t.same([unknown.status, unknown.body], [400, { code: 400, error_code: 'validation_failed', msg: 'Invalid code_challenge_method' }]);
  const short = await api.request('GET', '/authorize?provider=github&code_challenge=short&code_challenge_method=md5');
  t.equal(short.body.msg, 'code challenge has to be between 43 and 128 characters', 'the length first');
  const otp = await api.request('POST', '/otp', {
    body: { email: 'pkce-method@example.com', code_challenge: long, code_challenge_method: 'md5' },
  });
  t.same([otp.status, otp.body.msg], [400, 'Invalid code_challenge_method'], 'the email flows answer alike');
});

t.test('DISABLE_SIGNUP: a provider without any address is the missing-email 500, checked before signup_disabled', async (t) => {
  const closed = await startTestService({
    ...githubEnv(gh),
    AUTH_DISABLE_SIGNUP: 'true',
  });
  t.teardown(() => closed.stop());
  const person = githubUser('no-address@example.com', true);
  person.emails = [];
  gh.approveAs = person.id;
  const { location } = await callback(closed, await gh.approve((await authorizeUrl(closed, 'provider=github')).href));
  t.same(queryOf(location), {
    error: 'server_error',
    error_code: 'unexpected_failure',
    error_description: 'Error getting user email from external provider',
  });
});

t.test('EMAIL_OPTIONAL: a new account without an address is audited as login, as the original writes it', async (t) => {
  const optional = await startTestService({
    ...githubEnv(gh),
    AUTH_EXTERNAL_GITHUB_EMAIL_OPTIONAL: 'true',
  });
  t.teardown(() => optional.stop());
  const person = githubUser('unused@example.com', true);
  person.emails = [];
  gh.approveAs = person.id;
  const { location } = await callback(optional, await gh.approve((await authorizeUrl(optional, 'provider=github')).href));
  const me = await optional.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.status, 200, location.href);
  t.match(
    me.body.user_metadata,
    { email_verified: false, phone_verified: false },
    'no address: both flags false, as the original writes them',
  );
  t.notOk('email' in me.body.identities[0].identity_data);
  const { rows } = await optional.db.query(`select payload->>'action' as action from audit_log_entries where payload->>'actor_id' = $1`, [
    me.body.id,
  ]);
  t.same(
    rows.map((r) => r.action),
    ['login'],
  );
});

t.test('an imported identity whose email_verified is not the JSON true neither links nor fails the sign-in', async (t) => {
  // Rows carried over from another deployment may hold strings or numbers there; the original counts only a
  // JSON boolean true, so "true" does not attract a link and "maybe" is no error.
  for (const [flag, address] of [
    ['"true"', 'string-true@example.com'],
    ['"maybe"', 'string-maybe@example.com'],
    ['2', 'number-two@example.com'],
  ] as const) {
    const imported = githubUser(`imported-${address}`, true);
    const importedUser = fragmentOf((await signInWithGithub(imported)).location);
    t.ok(importedUser.access_token);
    const owner = await accountOfGithubUser(imported);
    await api.db.query(
      `update identities set identity_data = identity_data || jsonb_build_object('email', $2::text, 'email_verified', $3::jsonb)
       where provider = 'github' and provider_id = $1`,
      [String(imported.id), address, flag],
    );
    const newcomer = githubUser(address, true);
    const { location } = await signInWithGithub(newcomer);
    t.ok(fragmentOf(location).access_token, `${flag}: signed in, not ${JSON.stringify(queryOf(location))}`);
    const account = await accountOfGithubUser(newcomer);
    t.not(account.id, owner.id, `${flag}: not linked to the imported identity's account`);
  }
});

t.test('a takeover confirmation removes an identity whose email_verified is a string, without failing', async (t) => {
  const attacker = await api.request('POST', '/signup', { body: { email: 'planted@example.com', password: 'Attackers-password-1' } });
  t.equal(attacker.status, 200);
  await api.db.query(
    `update identities set identity_data = identity_data || '{"email_verified": "maybe", "phone_verified": "true"}'
     where user_id = $1 and provider = 'email'`,
    [attacker.body.id],
  );
  const { location } = await signInWithGithub(githubUser('planted@example.com', true));
  t.ok(fragmentOf(location).access_token, `signed in, not ${JSON.stringify(queryOf(location))}`);
  t.same(await identitiesOf(attacker.body.id), ['github'], 'the planted identity is gone: only a JSON true counts as verified');
});
