// A small plain OAuth 2.0 provider (RFC 6749 authorization code, RFC 7636 PKCE, a bearer userinfo
// endpoint) on an ephemeral port, for custom providers of type oauth2: no OIDC, no id_token. The
// authorization endpoint approves at once as `approveAs` and redirects to the redirect URI; the token
// endpoint checks the client's credentials, the code, the redirect URI and the PKCE verifier as a real
// server does, and remembers what it was sent. With `issueIdToken` set it acts as a minimal OpenID
// provider too: a discovery document (naming RS256 only, unless `signingAlgorithms` says otherwise), a
// JWKS holding an RS256 and an ES256 public key, and an id_token in the token answer made by the test (so
// a test can hand the service a forged one).
import http from 'node:http';
import type net from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type KeyLike } from 'jose';

export interface OAuth2Server {
  base: string;
  clientId: string;
  clientSecret: string;
  /** the profile the userinfo endpoint answers for the next approval */
  approveAs: Record<string, unknown>;
  /** the query of every authorization request */
  authorizations: URLSearchParams[];
  /** the form of every token request */
  tokenRequests: URLSearchParams[];
  /** when set, the token answer carries the id_token it returns for the approved profile */
  issueIdToken?: (profile: Record<string, unknown>) => Promise<string>;
  /** discovery documents asked for so far */
  discoveryRequests: number;
  /** when true, the discovery document is answered with a 503, as by an issuer having an outage */
  discoveryDown: boolean;
  /** the discovery document's id_token_signing_alg_values_supported (absent when undefined) */
  signingAlgorithms?: string[];
  /** the private halves of the published keys, by kid */
  keys: { rs: KeyLike; es: KeyLike };
  stop(): Promise<void>;
}

interface Grant {
  redirectUri: string;
  challenge: string | null;
  profile: Record<string, unknown>;
}

export async function startOAuth2Server(): Promise<OAuth2Server> {
  const rs = await generateKeyPair('RS256', { extractable: true });
  const es = await generateKeyPair('ES256', { extractable: true });
  const jwks = {
    keys: [
      { ...(await exportJWK(rs.publicKey)), kid: 'rs', alg: 'RS256', use: 'sig' },
      { ...(await exportJWK(es.publicKey)), kid: 'es', alg: 'ES256', use: 'sig' },
    ],
  };
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, Record<string, unknown>>();
  const state: OAuth2Server = {
    base: '',
    clientId: 'plain-client',
    clientSecret: 'plain-secret-0123456789',
    approveAs: {},
    authorizations: [],
    tokenRequests: [],
    discoveryRequests: 0,
    discoveryDown: false,
    signingAlgorithms: ['RS256'],
    keys: { rs: rs.privateKey, es: es.privateKey },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', state.base);
    if (req.method === 'GET' && url.pathname === '/oauth/authorize') {
      state.authorizations.push(url.searchParams);
      const code = randomBytes(16).toString('hex');
      codes.set(code, {
        redirectUri: url.searchParams.get('redirect_uri') ?? '',
        challenge: url.searchParams.get('code_challenge'),
        profile: { ...state.approveAs },
      });
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return res.writeHead(302, { location: back.href }).end();
    }
    if (req.method === 'POST' && url.pathname === '/oauth/token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const form = new URLSearchParams(body);
      state.tokenRequests.push(form);
      const grant = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (form.get('client_id') !== state.clientId || form.get('client_secret') !== state.clientSecret) {
        return json(res, 401, { error: 'invalid_client' });
      }
      if (!grant || grant.redirectUri !== form.get('redirect_uri')) return json(res, 400, { error: 'invalid_grant' });
      if (grant.challenge) {
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== grant.challenge)
          return json(res, 400, { error: 'invalid_grant' });
      }
      const accessToken = randomBytes(16).toString('hex');
      tokens.set(accessToken, grant.profile);
      const idToken = state.issueIdToken ? { id_token: await state.issueIdToken(grant.profile) } : {};
      return json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, ...idToken });
    }
    if (req.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      state.discoveryRequests++;
      if (state.discoveryDown) return json(res, 503, { error: 'temporarily_unavailable' });
      return json(res, 200, {
        issuer: state.base,
        authorization_endpoint: `${state.base}/oauth/authorize`,
        token_endpoint: `${state.base}/oauth/token`,
        userinfo_endpoint: `${state.base}/api/me`,
        jwks_uri: `${state.base}/jwks`,
        id_token_signing_alg_values_supported: state.signingAlgorithms,
      });
    }
    if (req.method === 'GET' && url.pathname === '/jwks') return json(res, 200, jwks);
    if (req.method === 'GET' && url.pathname === '/api/me') {
      const profile = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
      return profile ? json(res, 200, profile) : json(res, 401, { error: 'invalid_token' });
    }
    json(res, 404, { error: 'not_found' });
  };
  const server = http.createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return state;
}

/**
 * An id_token for the `mobile-app` client, signed with a server's RS256 key, naming `sub` and its verified
 * address `<sub>@example.com`; `extra` adds claims (a nonce, say).
 */
export function mobileIdToken(
  server: Pick<OAuth2Server, 'keys'>,
  issuer: string,
  sub: string,
  extra: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT({ sub, email: `${sub}@example.com`, email_verified: true, ...extra })
    .setProtectedHeader({ alg: 'RS256', kid: 'rs' })
    .setIssuer(issuer)
    .setAudience('mobile-app')
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(server.keys.rs);
}
