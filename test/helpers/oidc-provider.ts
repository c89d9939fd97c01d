// A real OpenID Connect provider (the `oidc-provider` package) on an ephemeral port, standing in for Google,
// Keycloak, Azure... in the tests. Its own development login and consent pages are driven by HTTP: signIn()
// follows the provider's redirects with a small cookie jar, posts the login form for the chosen account and
// the consent form, and returns the parameters the provider sends back to the redirect URI.
// Like Google and Apple, and unlike oidc-provider itself, it issues an id_token for the identity scopes
// (`email`, `profile`, `name`) even when `openid` is not among them: the original asks Google for
// `email profile` and Apple for `email name` only.
import http from 'node:http';
import type net from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type KeyLike } from 'jose';
// @ts-expect-error -- oidc-provider ships no type declarations
import Provider from 'oidc-provider';

export const REDIRECT_URI = 'https://app.example.test/auth/v1/callback';

export interface Account {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
  preferred_username?: string;
}

export interface OidcProviderOptions {
  clientId?: string;
  clientSecret?: string;
  /** appended to the base URL to make the issuer (azure: /v2.0) */
  issuerPath?: string;
  /** oidc-provider route overrides (keycloak's /protocol/openid-connect/..., azure's /oauth2/v2.0/...) */
  routes?: Record<string, string>;
}

export interface OidcServer {
  /** http://127.0.0.1:<port> */
  base: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, Account>;
  /** requests served, by path (how often the service fetched discovery or keys) */
  hits: Map<string, number>;
  /** When set, the token endpoint's JSON answer passes through it before it is sent (a misbehaving provider). */
  rewriteTokenAnswer?: (answer: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Follows `authorizeUrl` as a browser would, signing in as `sub`; the parameters sent to the redirect URI. */
  signIn(authorizeUrl: string, sub: string): Promise<URLSearchParams>;
  /** An id_token signed with the provider's own published key (for the id_token grant). */
  signIdToken(
    claims: Record<string, unknown>,
    /** null leaves the claim out: `iss` (issuer), `aud` (audience), `exp` (expiresIn) */
    options?: { issuer?: string | null; audience?: string | null; expiresIn?: string | number | null },
  ): Promise<string>;
  stop(): Promise<void>;
}

/** A provider laid out as a Keycloak realm (`<base>/realms/acme`, its protocol/openid-connect/... endpoints). */
export function startKeycloakRealm(clientId = 'kc-client'): Promise<OidcServer> {
  const realm = '/realms/acme';
  return startOidcProvider({
    clientId,
    issuerPath: realm,
    routes: {
      authorization: `${realm}/protocol/openid-connect/auth`,
      token: `${realm}/protocol/openid-connect/token`,
      userinfo: `${realm}/protocol/openid-connect/userinfo`,
      jwks: `${realm}/protocol/openid-connect/certs`,
    },
  });
}

export async function startOidcProvider(options: OidcProviderOptions = {}): Promise<OidcServer> {
  const clientId = options.clientId ?? 'portcullis-client';
  const clientSecret = options.clientSecret ?? 'portcullis-client-secret-0123456789';
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const issuer = base + (options.issuerPath ?? '');

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'test-key-1';
  const jwk = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const accounts = new Map<string, Account>();
  const hits = new Map<string, number>();

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [REDIRECT_URI],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    scopes: ['openid', 'email', 'profile', 'offline_access', 'name'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture', 'preferred_username'] },
    // Scope claims in the id_token too, as Google and Azure put them there.
    conformIdTokenClaims: false,
    pkce: { required: () => false },
    routes: options.routes ?? {},
    async findAccount(_ctx: unknown, sub: string) {
      const account = accounts.get(sub);
      if (!account) return undefined;
      return { accountId: sub, claims: async () => ({ ...account }) };
    },
  });
  provider.proxy = false;
  const callback = provider.callback();
  const authorizationPath = options.routes?.authorization ?? '/auth';
  const tokenPath = options.routes?.token ?? '/token';
  handler = (req, res) => {
    const url = new URL(req.url ?? '/', base);
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    if (url.pathname === tokenPath && served.rewriteTokenAnswer) rewriteAnswer(res, served.rewriteTokenAnswer);
    if (url.pathname === authorizationPath) req.url = impliedOpenid(url);
    // An issuer with a path publishes its discovery document under that path (where go-oidc and the
    // service look for it); oidc-provider serves it at the root of its mount.
    if (options.issuerPath && url.pathname === `${options.issuerPath}/.well-known/openid-configuration`) {
      req.url = '/.well-known/openid-configuration';
    }
    callback(req, res);
  };

  const served: OidcServer = {
    base,
    issuer,
    clientId,
    clientSecret,
    accounts,
    hits,
    signIn: (authorizeUrl, sub) => driveSignIn(authorizeUrl, sub),
    signIdToken: (claims, o = {}) =>
      signWith(privateKey, kid, claims, {
        issuer: o.issuer === undefined ? issuer : o.issuer,
        audience: o.audience === undefined ? clientId : o.audience,
        expiresIn: o.expiresIn === undefined ? '5m' : o.expiresIn,
      }),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return served;
}

/** Replaces a JSON answer's body as it is ended (oidc-provider's Koa sets headers, then ends with the whole body). */
function rewriteAnswer(res: http.ServerResponse, rewrite: (answer: Record<string, unknown>) => Promise<Record<string, unknown>>): void {
  const end = res.end.bind(res) as (chunk?: unknown) => http.ServerResponse;
  res.end = ((chunk?: unknown) => {
    if (typeof chunk !== 'string' && !Buffer.isBuffer(chunk)) return end(chunk);
    void rewrite(JSON.parse(chunk.toString()) as Record<string, unknown>).then(
      (answer) => {
        const text = JSON.stringify(answer);
        res.setHeader('content-length', Buffer.byteLength(text));
        end(text);
      },
      (err: unknown) => res.destroy(err as Error),
    );
    return res;
  }) as typeof res.end;
}

function signWith(
  key: KeyLike,
  kid: string,
  claims: Record<string, unknown>,
  o: { issuer: string | null; audience: string | null; expiresIn: string | number | null },
) {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).setIssuedAt();
  if (o.issuer !== null) jwt.setIssuer(o.issuer);
  if (o.audience !== null) jwt.setAudience(o.audience);
  if (o.expiresIn !== null) jwt.setExpirationTime(o.expiresIn);
  return jwt.sign(key);
}

/** The authorization request's path and query, `openid` added to a scope of identity scopes that lacks it. */
function impliedOpenid(url: URL): string {
  const scopes = (url.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
  if (!scopes.includes('openid') && scopes.some((s) => ['email', 'profile', 'name'].includes(s))) {
    url.searchParams.set('scope', ['openid', ...scopes].join(' '));
  }
  return url.pathname + url.search;
}

/** The browser's part: redirects, the login form, the consent form, until the provider answers the redirect URI. */
async function driveSignIn(authorizeUrl: string, sub: string): Promise<URLSearchParams> {
  const jar = new Map<string, string>();
  const cookieHeader = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const remember = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  };
  let url = authorizeUrl;
  let method: 'GET' | 'POST' = 'GET';
  let body: URLSearchParams | undefined;
  for (let step = 0; step < 12; step++) {
    if (url.startsWith(REDIRECT_URI)) return new URL(url).searchParams;
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: cookieHeader(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      body,
    });
    remember(res);
    const location = res.headers.get('location');
    if (location) {
      await res.body?.cancel();
      url = new URL(location, url).href;
      method = 'GET';
      body = undefined;
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`OIDC provider answered ${res.status}: ${html.slice(0, 500)}`);
    const posted = formPost(html);
    if (posted) return posted;
    const uid = /\/interaction\/([^/"?]+)/.exec(url)?.[1];
    if (!uid) throw new Error(`unexpected OIDC provider page at ${url}`);
    method = 'POST';
    body = html.includes('name="login"')
      ? new URLSearchParams({ prompt: 'login', login: sub, password: 'any' })
      : new URLSearchParams({ prompt: 'consent' });
  }
  throw new Error('OIDC sign-in did not reach the redirect URI');
}

/** response_mode=form_post: the auto-submitting form aimed at the redirect URI, as its fields. */
function formPost(html: string): URLSearchParams | null {
  if (!html.includes(`action="${REDIRECT_URI}"`)) return null;
  const fields = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)) fields.set(m[1], decodeEntities(m[2]));
  return fields;
}

const decodeEntities = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#x2F;/g, '/');
