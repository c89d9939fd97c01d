// Concurrent first sign-ins of one new external identity (the web3 and id_token grants through
// oauth/linking.ts, SAML through saml/sign-in-user.ts) answer as the same sign-ins one after another would:
// the first creates the user (the user-created hooks called once, one user_signedup entry), the others sign
// in that user. The interleaving is forced, not hoped for: the test holds a SHARE lock on identities, which
// lets every lookup (`for update` included) through but makes the insert of the new identity wait; the
// requests start, and are let go only once all of them wait on a lock (pg_stat_activity). Without
// serialization on the identity every request is then past its lookup and about to create an account.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService, type Reply } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { holdLock } from './helpers/row-lock.js';
import { startKeycloakRealm } from './helpers/oidc-provider.js';
import { providerEnv } from './helpers/oauth.js';
import { newHookSecret, startHookServer } from './helpers/hook-server.js';
import { base64Url, signInMessage, solanaAccount } from './helpers/web3.js';
import { TestIdp, postToAcs, spPrivateKey } from './helpers/saml-idp.js';

const N = 6;

const hooks = await startHookServer();
const keycloak = await startKeycloakRealm();
const hook = (name: string, path: string) => ({
  [`AUTH_HOOK_${name}_ENABLED`]: 'true',
  [`AUTH_HOOK_${name}_URI`]: `${hooks.url}${path}`,
  [`AUTH_HOOK_${name}_SECRETS`]: `${newHookSecret()}|${hooks.secret}`,
});
const api = await startTestService({
  ...providerEnv('keycloak', {
    clientId: 'kc-client',
    secret: keycloak.clientSecret,
    redirectUri: 'https://app.example.test/cb',
    url: keycloak.issuer,
  }),
  ...hook('BEFORE_USER_CREATED', '/before'),
  ...hook('AFTER_USER_CREATED', '/after'),
  AUTH_SITE_URL: 'https://app.example.com',
  AUTH_EXTERNAL_WEB3_SOLANA_ENABLED: 'true',
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
  // Every racing request holds a connection while it waits on the lock, and an id_token sign-in also one of
  // the sending-transaction slots, about half the pool: room for all N, whatever the default.
  AUTH_DB_MAX_POOL_SIZE: String(4 * N),
});
t.teardown(async () => {
  await api.stop();
  await keycloak.stop();
  await hooks.close();
});
hooks.on('/before', () => ({ body: {} }));
hooks.on('/after', () => ({ body: {} }));

/** Starts every request behind a SHARE lock on identities, waits until all of them wait on a lock, then releases it. */
async function racing<T>(requests: Array<() => Promise<T>>): Promise<T[]> {
  const held = await holdLock(api.db, 'lock table identities in share mode');
  const replies = requests.map((send) => send());
  for (const reply of replies) reply.catch(() => undefined); // awaited below; must not go unhandled meanwhile
  try {
    await held.waiters(requests.length); // releases the lock when they never all wait
  } catch (err) {
    // The answers of those that did not wait tell why (an error before the lookup, say).
    const answers = await Promise.all(replies);
    throw new Error(`${(err as Error).message}: ${JSON.stringify(answers).slice(0, 2000)}`, { cause: err });
  }
  await held.release();
  return Promise.all(replies);
}

/** The answers that are not a 200, for the assertion's message. */
const failures = (replies: Reply[]) =>
  replies
    .filter((r) => r.status !== 200)
    .map((r) => `${r.status} ${r.text}`)
    .join('\n');
const count = async (sql: string, values: unknown[]) => (await api.db.query(sql, values)).rowCount;
const auditActions = async (userId: string) =>
  (await api.db.query("select payload->>'action' as action from audit_log_entries where payload->>'actor_id' = $1", [userId])).rows
    .map((r) => r.action as string)
    .sort();
const hookCalls = (path: string, match: (user: Record<string, any>) => boolean) =>
  hooks.callsTo(path).filter((c) => match(c.payload.user as Record<string, any>)).length;

t.test('web3: concurrent first sign-ins of one new wallet all sign in the one user the first created', async (t) => {
  const account = solanaAccount();
  const subject = `web3:solana:${account.address}`;
  const bodies = Array.from({ length: N }, (_, i) => {
    const message = signInMessage('Solana', account.address, { nonce: `race-nonce-${i}` });
    return { chain: 'solana', message, signature: base64Url(account.sign(message)) };
  });
  const replies = await racing(bodies.map((body) => () => api.request('POST', '/token?grant_type=web3', { body })));

  t.strictSame(
    replies.map((r) => r.status),
    Array(N).fill(200),
    failures(replies),
  );
  const ids = new Set(replies.map((r) => r.body?.user?.id));
  t.equal(ids.size, 1, 'one user for every answer');
  const [userId] = ids;
  t.equal(await count("select 1 from users where raw_user_meta_data->>'sub' = $1", [subject]), 1, 'one user');
  t.equal(await count("select 1 from identities where provider = 'web3' and provider_id = $1", [subject]), 1, 'one identity');
  // A wallet has no address: every sign-in, the first too, is audited as two logins (the account step's and the grant's).
  t.strictSame(await auditActions(userId), Array(2 * N).fill('login'));
  const isThisWallet = (u: Record<string, any>) => u.user_metadata?.sub === subject;
  t.equal(hookCalls('/before', isThisWallet), 1, 'before-user-created asked once');
  t.equal(hookCalls('/after', isThisWallet), 1, 'after-user-created told once');
});

t.test('id_token: concurrent first sign-ins of one new subject all sign in the one user the first created', async (t) => {
  const nonce = 'race-nonce-0123456789';
  const nonceHash = createHash('sha256').update(nonce).digest('hex');
  const email = 'racer-idtoken@example.com';
  const tokens = await Promise.all(
    Array.from({ length: N }, () => keycloak.signIdToken({ sub: 'kc-racer', email, email_verified: true, nonce: nonceHash })),
  );
  const replies = await racing(
    tokens.map(
      (idToken) => () => api.request('POST', '/token?grant_type=id_token', { body: { provider: 'keycloak', id_token: idToken, nonce } }),
    ),
  );

  t.strictSame(
    replies.map((r) => r.status),
    Array(N).fill(200),
    failures(replies),
  );
  const ids = new Set(replies.map((r) => r.body?.user?.id));
  t.equal(ids.size, 1, 'one user for every answer');
  const [userId] = ids;
  t.equal(await count('select 1 from users where email = $1', [email]), 1, 'one user');
  t.equal(await count("select 1 from identities where provider = 'keycloak' and provider_id = 'kc-racer'", []), 1, 'one identity');
  t.strictSame(await auditActions(userId), [...Array(N - 1).fill('login'), 'user_signedup'], 'one sign-up, then logins');
  const isThisUser = (u: Record<string, any>) => u.email === email;
  t.equal(hookCalls('/before', isThisUser), 1, 'before-user-created asked once');
  t.equal(hookCalls('/after', isThisUser), 1, 'after-user-created told once');
});

t.test('SAML: concurrent first sign-ins of one new subject all sign in the one user the first created', async (t) => {
  const idp = new TestIdp();
  const created = await api.request('POST', '/admin/sso/providers', {
    token: await adminToken(),
    body: { type: 'saml', metadata_xml: idp.metadata(), domains: ['racing.test'] },
  });
  t.equal(created.status, 201, created.status === 201 ? 'the SSO provider is created' : created.text);
  const provider = `sso:${created.body.id}`;
  const spCertificate = await api.request('GET', '/sso/saml/metadata').then((r) => {
    const b64 = /<X509Certificate>([^<]+)</.exec(r.text)![1];
    return `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
  });
  const sp = { entityId: `${api.url}/sso/saml/metadata`, acsUrl: `${api.url}/sso/saml/acs` };
  const email = 'racer@racing.test';
  const posts: Array<Record<string, string>> = [];
  for (let i = 0; i < N; i++) {
    const started = await api.request('POST', '/sso', { body: { domain: 'racing.test', skip_http_redirect: true } });
    const request = idp.readRequest(started.body.url, spCertificate);
    const attributes = [{ name: 'email', values: [email] }];
    posts.push({
      SAMLResponse: idp.response(sp, { inResponseTo: request.id, nameId: 'racer-1', attributes }),
      RelayState: request.relayState,
    });
  }
  const replies = await racing(posts.map((fields) => () => postToAcs(api.url, fields)));

  // A failed sign-in is redirected with its error in the query or fragment; a session's tokens are not printed.
  const summary = replies
    .map((r) => `${r.status} ${r.location?.hash.includes('access_token') ? 'signed in' : (r.location?.href ?? '')}`)
    .join('\n');
  t.strictSame(
    replies.map((r) => r.status),
    Array(N).fill(302),
    summary,
  );
  const subs = replies.map((r) => {
    const token = new URLSearchParams(r.location?.hash.slice(1) ?? '').get('access_token');
    return token ? JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub : null;
  });
  const ids = new Set(subs);
  t.equal(ids.size, 1, 'one user for every answer');
  t.not(subs[0], null, summary);
  const [userId] = ids;
  t.equal(await count('select 1 from users where email = $1', [email]), 1, 'one user');
  t.equal(await count("select 1 from identities where provider = $1 and provider_id = 'racer-1'", [provider]), 1, 'one identity');
  t.strictSame(await auditActions(userId ?? ''), [...Array(N - 1).fill('login'), 'user_signedup'], 'one sign-up, then logins');
  const isThisUser = (u: Record<string, any>) => u.email === email;
  t.equal(hookCalls('/before', isThisUser), 1, 'before-user-created asked once');
  t.equal(hookCalls('/after', isThisUser), 1, 'after-user-created told once');
});
