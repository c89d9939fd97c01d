// After the flow (docs/oauth-server.md#grants, #userinfo, #clients): the user lists the apps they
// authorized and revokes one through @supabase/auth-js, which ends that app's sessions and tokens; the
// UserInfo endpoint answers by the scopes granted; an app's refresh token works at /oauth/token only; an
// app registers itself when dynamic registration is on and signs a user in as a public client.
import t from 'tap';
import * as oidc from 'openid-client';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import {
  APP_REDIRECT,
  authorizationIdOf,
  authorize,
  basic,
  oauthServerEnv,
  registerClient,
  relyingParty,
  signedInUser,
  startFlow,
  tokenRequest,
} from './helpers/oauth-server.js';

const api = await startTestService({ ...oauthServerEnv(), AUTH_OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION: 'true' });
t.teardown(() => api.stop());

/** A user who approved `config`'s app for `scope`, and the app's tokens. */
async function grant(config: oidc.Configuration, scope: string, user?: Awaited<ReturnType<typeof signedInUser>>) {
  const flow = await startFlow(config, scope);
  const who = user ?? (await signedInUser(api));
  const id = authorizationIdOf((await authorize(flow.url)).location);
  const details = await who.client.oauth.getAuthorizationDetails(id);
  const redirectUrl =
    details.data && 'redirect_url' in details.data
      ? details.data.redirect_url
      : (await who.client.oauth.approveAuthorization(id, { skipBrowserRedirect: true })).data!.redirect_url;
  const tokens = await oidc.authorizationCodeGrant(config, new URL(redirectUrl), {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
  });
  return { user: who, tokens };
}

t.test('list and revoke: revoking ends the app’s sessions and tokens, not the user’s own', async (t) => {
  const app = await registerClient(api, { client_name: 'Revocable', client_uri: 'https://app.example' });
  const other = await registerClient(api, { client_name: 'Other' });
  const config = await relyingParty(api, app.client_id, oidc.ClientSecretBasic(app.client_secret));
  const otherConfig = await relyingParty(api, other.client_id, oidc.ClientSecretBasic(other.client_secret));
  const { user, tokens } = await grant(config, 'openid email');
  const { tokens: otherTokens } = await grant(otherConfig, 'email', user);

  const listed = await user.client.oauth.listGrants();
  t.equal(listed.error, null);
  const byName = Object.fromEntries(listed.data!.map((g) => [g.client.name, g]));
  t.strictSame(byName.Revocable.client, { id: app.client_id, name: 'Revocable', uri: 'https://app.example' });
  t.strictSame(byName.Revocable.scopes, ['openid', 'email']);
  t.ok(Date.parse(byName.Revocable.granted_at));
  t.ok(byName.Other);

  const revoked = await user.client.oauth.revokeGrant({ clientId: app.client_id });
  t.equal(revoked.error, null);
  const refused = await tokenRequest(
    api,
    { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
    basic(app.client_id, app.client_secret!),
  );
  t.strictSame(refused, {
    status: 400,
    body: { code: 400, error_code: 'refresh_token_not_found', msg: 'Invalid Refresh Token: Refresh Token Not Found' },
  });
  const stale = await api.request('GET', '/user', { token: tokens.access_token });
  t.equal(stale.status, 403, 'the app’s access token names a session that no longer exists');
  t.equal((await api.request('GET', '/user', { token: otherTokens.access_token })).status, 200, 'the other app keeps its session');
  t.equal((await api.request('GET', '/user', { token: user.session.access_token })).status, 200, 'the user’s own session stays');
  t.strictSame(
    (await user.client.oauth.listGrants()).data!.map((g) => g.client.name),
    ['Other'],
  );
  const { rows } = await api.db.query(
    `select payload->>'action' as action, payload->'traits' as traits from audit_log_entries
                                       where payload->'traits'->>'oauth_client_id' = $1`,
    [app.client_id],
  );
  t.strictSame(rows, [{ action: 'token_revoked', traits: { oauth_client_id: app.client_id, action: 'revoke_oauth_grant' } }]);

  const again = await api.request('DELETE', `/user/oauth/grants?client_id=${app.client_id}`, { token: user.session.access_token });
  t.strictSame(
    [again.status, again.body],
    [404, { code: 404, error_code: 'oauth_consent_not_found', msg: 'No active grant found for this client' }],
  );
  const missing = await api.request('DELETE', '/user/oauth/grants', { token: user.session.access_token });
  t.strictSame(missing.body, { code: 400, error_code: 'validation_failed', msg: 'client_id query parameter is required' });
  const malformed = await api.request('DELETE', '/user/oauth/grants?client_id=x', { token: user.session.access_token });
  t.strictSame(malformed.body, { code: 400, error_code: 'validation_failed', msg: 'invalid client_id format' });
});

t.test('a grant is revoked by any spelling the original reads as a UUID; the canonical id is audited', async (t) => {
  const app = await registerClient(api);
  const config = await relyingParty(api, app.client_id, oidc.ClientSecretBasic(app.client_secret));
  const { user } = await grant(config, 'email');
  const bare = app.client_id.replace(/-/g, '');
  const res = await api.request('DELETE', `/user/oauth/grants?client_id=%7B${bare}%7D`, { token: user.session.access_token });
  t.equal(res.status, 204);
  t.strictSame((await user.client.oauth.listGrants()).data, []);
  const { rows } = await api.db.query(
    `select payload->'traits'->>'oauth_client_id' as client from audit_log_entries
      where payload->>'action' = 'token_revoked' and payload->>'actor_id' = $1`,
    [user.user.id],
  );
  t.strictSame(rows, [{ client: app.client_id }]);
});

t.test('a revoked app must ask again: the next request shows the consent page', async (t) => {
  const app = await registerClient(api);
  const config = await relyingParty(api, app.client_id, oidc.ClientSecretBasic(app.client_secret));
  const { user } = await grant(config, 'email');
  await user.client.oauth.revokeGrant({ clientId: app.client_id });
  const id = authorizationIdOf((await authorize((await startFlow(config, 'email')).url)).location);
  const details = await user.client.oauth.getAuthorizationDetails(id);
  t.equal((details.data as { authorization_id?: string }).authorization_id, id, 'details, not an automatic approval');
});

t.test('userinfo answers the claims of the scopes granted', async (t) => {
  const app = await registerClient(api);
  const config = await relyingParty(api, app.client_id, oidc.ClientSecretBasic(app.client_secret));
  const { user, tokens } = await grant(config, 'openid email');
  const info = await oidc.fetchUserInfo(config, tokens.access_token, user.user.id);
  t.strictSame(info, { sub: user.user.id, email: user.user.email, email_verified: true });
  const own = await api.request('GET', '/oauth/userinfo', { token: user.session.access_token });
  t.strictSame(own.body, { sub: user.user.id }, 'a session not issued to an app: sub alone');
});

t.test('an app’s refresh token is refused at /token', async (t) => {
  const app = await registerClient(api);
  const config = await relyingParty(api, app.client_id, oidc.ClientSecretBasic(app.client_secret));
  const { tokens, user } = await grant(config, 'email');
  const res = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: tokens.refresh_token } });
  t.strictSame(
    [res.status, res.body],
    [400, { error: 'invalid_client', error_description: 'Client authentication required for OAuth session' }],
  );
  const own = await tokenRequest(
    api,
    { grant_type: 'refresh_token', refresh_token: user.session.refresh_token },
    basic(app.client_id, app.client_secret!),
  );
  t.strictSame(own, {
    status: 400,
    body: { error: 'invalid_client', error_description: 'Client authentication not allowed for non-OAuth session' },
  });
  const other = await registerClient(api);
  const stolen = await tokenRequest(
    api,
    { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
    basic(other.client_id, other.client_secret!),
  );
  t.strictSame(stolen, {
    status: 400,
    body: { error: 'invalid_client', error_description: "Client does not match the session's OAuth client" },
  });
  // The client is checked last, as the original: a banned user's token is answered as banned whoever presents it.
  await api.db.query(`update users set banned_until = now() + interval '1 hour' where id = $1`, [user.user.id]);
  const banned = await tokenRequest(
    api,
    { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
    basic(other.client_id, other.client_secret!),
  );
  t.strictSame(banned, { status: 400, body: { code: 400, error_code: 'user_banned', msg: 'Invalid Refresh Token: User Banned' } });
});

t.test('dynamic registration: a public app registers itself and signs a user in', async (t) => {
  const res = await api.request('POST', '/oauth/clients/register', {
    body: { client_name: 'Self-registered', redirect_uris: [APP_REDIRECT], token_endpoint_auth_method: 'none' },
  });
  t.equal(res.status, 201);
  t.equal(res.body.registration_type, 'dynamic');
  t.equal(res.body.client_type, 'public');
  t.notOk('client_secret' in res.body);
  const metadata = await api.request('GET', '/.well-known/oauth-authorization-server');
  t.equal(metadata.body.registration_endpoint, `${api.url}/oauth/clients/register`);
  const config = await relyingParty(api, res.body.client_id, oidc.None());
  const { tokens } = await grant(config, 'openid profile');
  t.equal(tokens.claims()!.aud, res.body.client_id);
  const listed = await api.request('GET', `/admin/oauth/clients/${res.body.client_id}`, { token: await adminToken('service_role') });
  t.equal(listed.body.client_name, 'Self-registered');
});

t.test('deleting a client ends its sessions', async (t) => {
  const app = await registerClient(api);
  const config = await relyingParty(api, app.client_id, oidc.ClientSecretBasic(app.client_secret));
  const { tokens } = await grant(config, 'email');
  t.equal((await api.request('DELETE', `/admin/oauth/clients/${app.client_id}`, { token: await adminToken('service_role') })).status, 204);
  t.equal((await api.request('GET', '/user', { token: tokens.access_token })).status, 403);
});
