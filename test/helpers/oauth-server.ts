// The OAuth 2.1 server's tests (test/oauth-server-*.test.ts): a service acting as identity provider with
// an ES256 signing key, a user signed in through @supabase/auth-js, and a third-party app as an
// openid-client relying party configured by discovery from the service's own metadata.
import * as oidc from 'openid-client';
import { generateJwk } from '../../dist/server/auth/keys.js';
import { authClient } from './auth-client.js';
import { uniqueEmail } from './accounts.js';
import { adminToken } from './admin.js';
import type { TestService } from './server.js';

export const CONSENT_PATH = '/oauth/consent';
export const APP_REDIRECT = 'http://localhost:4000/callback';

export const oauthServerEnv = (): Record<string, string> => ({
  AUTH_OAUTH_SERVER_ENABLED: 'true',
  AUTH_OAUTH_SERVER_AUTHORIZATION_PATH: CONSENT_PATH,
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_JWT_KEYS: JSON.stringify([generateJwk('ES256')]),
  // HS256 stays accepted beside the ES256 key: the tests' admin and service_role keys are HS256 (helpers/admin.ts)
  AUTH_JWT_VALID_METHODS: 'ES256,HS256',
});

export async function registerClient(api: TestService, body: Record<string, unknown> = {}) {
  const res = await api.request('POST', '/admin/oauth/clients', {
    token: await adminToken('service_role'),
    body: { client_name: 'Test app', redirect_uris: [APP_REDIRECT], ...body },
  });
  if (res.status !== 201) throw new Error(`client registration failed: ${res.status} ${res.text}`);
  return res.body as { client_id: string; client_secret?: string };
}

/** A user signed in through auth-js: its oauth.* methods are the consent page's calls. */
export async function signedInUser(api: TestService) {
  const client = authClient(api.url);
  const email = uniqueEmail('oauth');
  const { data, error } = await client.signUp({ email, password: 'Secret-password-1' });
  if (error || !data.session) throw new Error(`sign-up failed: ${error?.message}`);
  return { client, user: data.user!, session: data.session };
}

/** The relying party: discovery from our issuer (plain http on loopback allowed), ID token signatures checked against our JWKS. */
export async function relyingParty(api: TestService, clientId: string, auth: oidc.ClientAuth, secret?: string) {
  const config = await oidc.discovery(new URL(api.url), clientId, secret, auth, { execute: [oidc.allowInsecureRequests] });
  oidc.enableNonRepudiationChecks(config);
  return config;
}

/** GET /oauth/authorize as a browser would, without following: the Location it answers (a redirect's HTML page is not read). */
export async function authorize(url: URL | string): Promise<{ status: number; location: string | null; body: any }> {
  const res = await fetch(url, { redirect: 'manual' });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json');
  return { status: res.status, location: res.headers.get('location'), body: text && json ? JSON.parse(text) : undefined };
}

/** The app's side of the flow up to the consent page: the authorization URL with PKCE, state and nonce. */
export async function startFlow(config: oidc.Configuration, scope = 'openid email profile') {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  // a nonce only for OpenID: a relying party that sent one expects an ID token back
  const nonce = scope.split(' ').includes('openid') ? oidc.randomNonce() : undefined;
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: APP_REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...(nonce ? { nonce } : {}),
  });
  return { url, verifier, state, nonce };
}

export const authorizationIdOf = (location: string | null): string =>
  new URL(location ?? 'http://x/').searchParams.get('authorization_id') ?? '';

/** POST /oauth/token with a form body, as an app would, answered raw. */
export async function tokenRequest(api: TestService, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

/**
 * A confidential client, a user who approved it, and the exchange of the code that approval issued (the race
 * tests hold it back behind a lock), with the user's revoke of the grant.
 */
export async function approvedCode(api: TestService) {
  const client = await registerClient(api);
  const config = await relyingParty(api, client.client_id, oidc.ClientSecretBasic(client.client_secret));
  const flow = await startFlow(config, 'email');
  const user = await signedInUser(api);
  const authorizationId = authorizationIdOf((await authorize(flow.url)).location);
  await user.client.oauth.getAuthorizationDetails(authorizationId);
  const { data, error } = await user.client.oauth.approveAuthorization(authorizationId, { skipBrowserRedirect: true });
  if (error || !data) throw new Error(`approve failed: ${error?.message}`);
  const code = new URL(data.redirect_url).searchParams.get('code')!;
  const exchange = () =>
    tokenRequest(
      api,
      { grant_type: 'authorization_code', code, code_verifier: flow.verifier, redirect_uri: APP_REDIRECT },
      basic(client.client_id, client.client_secret!),
    );
  const revoke = () => api.request('DELETE', `/user/oauth/grants?client_id=${client.client_id}`, { token: user.session.access_token });
  return { client, config, authorizationId, user: user.user, accessToken: user.session.access_token, exchange, revoke };
}
