// A small plain OAuth 2.0 provider (RFC 6749 authorization code, RFC 7636 PKCE, a bearer userinfo
// endpoint) on an ephemeral port, for custom providers of type oauth2: no OIDC, no id_token. The
// authorization endpoint approves at once as `approveAs` and redirects to the redirect URI; the token
// endpoint checks the client's credentials, the code, the redirect URI and the PKCE verifier as a real
// server does, and remembers what it was sent.
import http from 'node:http';
import type net from 'node:net';
import { createHash, randomBytes } from 'node:crypto';

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
  stop(): Promise<void>;
}

interface Grant {
  redirectUri: string;
  challenge: string | null;
  profile: Record<string, unknown>;
}

export async function startOAuth2Server(): Promise<OAuth2Server> {
  const codes = new Map<string, Grant>();
  const tokens = new Map<string, Record<string, unknown>>();
  const state: OAuth2Server = {
    base: '',
    clientId: 'plain-client',
    clientSecret: 'plain-secret-0123456789',
    approveAs: {},
    authorizations: [],
    tokenRequests: [],
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
      return json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 3600 });
    }
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
