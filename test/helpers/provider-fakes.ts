// Plumbing for the identity-provider fakes of test/providers-*.test.ts: a local HTTP server whose routes a
// test writes in the provider's real wire format, checks that refuse a request the way the real provider
// would (wrong grant, credentials in the wrong place, missing bearer token), an independent OAuth 1.0a
// HMAC-SHA1 signature verifier, and a ProviderRuntime built from the service's own boundedFetch.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { boundedFetch } from '../../dist/server/providers/outbound.js';
import type { OAuthProviderConfig } from '../../dist/server/config/types.js';
import type { ProviderRuntime } from '../../dist/server/providers/types.js';

export interface FakeRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** the body read as a form (empty unless form-encoded) */
  form: URLSearchParams;
  /** the body read as JSON (undefined unless JSON) */
  json: unknown;
}

export interface FakeAnswer {
  status?: number;
  json?: unknown;
  /** a raw body, sent with `contentType` (default text/html) */
  text?: string;
  contentType?: string;
  /** extra response headers (a redirect's Location) */
  headers?: Record<string, string>;
  /** 'headers': never answer at all; 'body': send the headers and part of a body, then stall */
  stall?: 'headers' | 'body';
  /** this many bytes of `text` repeated, sent chunked with no length: an answer far larger than any real one */
  huge?: number;
}

export type Route = (req: FakeRequest) => FakeAnswer | Promise<FakeAnswer>;

export interface ProviderFake {
  /** http://127.0.0.1:<port>, to be given as EXTERNAL_<PROVIDER>_URL */
  url: string;
  /** every request received, in order */
  requests: FakeRequest[];
  /** the received requests for one `METHOD /path` */
  received: (route: string) => FakeRequest[];
  close: () => Promise<void>;
}

/**
 * Routes are keyed `METHOD /path` (query excluded); `*` answers every request not otherwise routed (for
 * misbehaving providers). Anything else gets 404 JSON, as an API would.
 */
export async function startProviderFake(routes: Record<string, Route>): Promise<ProviderFake> {
  const requests: FakeRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const body = Buffer.concat(chunks).toString();
      const type = req.headers['content-type'] ?? '';
      let json: unknown;
      if (type.startsWith('application/json')) {
        try {
          json = JSON.parse(body);
        } catch {
          json = undefined;
        }
      }
      const request: FakeRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        form: type.startsWith('application/x-www-form-urlencoded') ? new URLSearchParams(body) : new URLSearchParams(),
        json,
      };
      requests.push(request);
      const route = routes[`${request.method} ${request.path}`] ?? routes['*'];
      const answering = route ? Promise.resolve(route(request)) : Promise.resolve({ status: 404, json: { error: 'not_found' } });
      answering.then(
        (answer) => send(res, answer),
        (error: unknown) => send(res, { status: 500, json: { error: String(error) } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    received: (route) => requests.filter((r) => `${r.method} ${r.path}` === route),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: http.ServerResponse, answer: FakeAnswer): void {
  if (answer.stall === 'headers') return; // the socket stays open until close(): a provider that never answers
  const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.text ?? '');
  const contentType = answer.json !== undefined ? 'application/json; charset=utf-8' : (answer.contentType ?? 'text/html; charset=utf-8');
  if (answer.huge !== undefined) {
    res.writeHead(answer.status ?? 200, { ...answer.headers, 'content-type': contentType });
    sendRepeated(res, Buffer.from(body), answer.huge);
    return;
  }
  if (answer.stall === 'body') {
    res.writeHead(answer.status ?? 200, {
      ...answer.headers,
      'content-type': contentType,
      'content-length': Buffer.byteLength(body) + 100,
    });
    res.write(body); // 100 bytes short of what was announced: the body never completes
    return;
  }
  res.writeHead(answer.status ?? 200, { ...answer.headers, 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Writes `chunk` until `total` bytes went out, waiting for drain, and stops early once the client hung up. */
function sendRepeated(res: http.ServerResponse, chunk: Buffer, total: number): void {
  let sent = 0;
  const more = (): void => {
    while (sent < total && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    if (!res.destroyed) res.end();
  };
  more();
}

// ---------------------------------------------------------------------------------------------------
// The runtime a provider module gets, and its configuration

export const CLIENT_ID = 'client-id-1';
export const CLIENT_SECRET = 'client secret/+&=1';
export const REDIRECT_URI = 'https://auth.example.test/auth/v1/callback';

export function providerConfig(overrides: Partial<OAuthProviderConfig> = {}): OAuthProviderConfig {
  return {
    enabled: true,
    // a comma list, as EXTERNAL_<PROVIDER>_CLIENT_ID allows: the first id runs the flow
    clientId: `${CLIENT_ID},other-client-id`,
    secret: CLIENT_SECRET,
    redirectUri: REDIRECT_URI,
    url: '',
    apiUrl: '',
    emailOptional: false,
    skipNonceCheck: false,
    ...overrides,
  };
}

export function testRuntime(config: OAuthProviderConfig, timeoutSeconds = 5): ProviderRuntime {
  return {
    config,
    fetch: boundedFetch(timeoutSeconds),
    discover: () => Promise.reject(new Error('plain OAuth2 providers have no discovery document')),
    verifyIdToken: () => Promise.reject(new Error('plain OAuth2 providers never verify an id_token')),
  };
}

// ---------------------------------------------------------------------------------------------------
// Checks a fake makes before answering, each returning the provider's refusal or null when satisfied

const oauthError = (status: number, error: string, description: string): FakeAnswer => ({
  status,
  json: { error, error_description: description },
});

/** The Basic credentials, each part form-decoded as RFC 6749 §2.3.1 has them encoded. */
export function basicCredentials(headers: http.IncomingHttpHeaders): { id: string; secret: string } | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(headers.authorization ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString();
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

export interface CodeGrantRules {
  code: string;
  credentials: 'basic' | 'body';
  encoding?: 'form' | 'json';
  /** X: the S256 challenge the authorization request carried; the token call must bring its verifier */
  codeChallenge?: string;
}

/**
 * An authorization-code token request as the provider checks it: method, body encoding, grant_type, code,
 * redirect_uri, the client credentials in the place this provider reads them (and only there), PKCE.
 */
export function checkCodeGrant(req: FakeRequest, rules: CodeGrantRules): FakeAnswer | null {
  if (req.method !== 'POST') return { status: 405, json: { error: 'method_not_allowed' } };
  const encoding = rules.encoding ?? 'form';
  let fields: Record<string, unknown>;
  if (encoding === 'json') {
    if (req.json === null || typeof req.json !== 'object') return oauthError(400, 'invalid_request', 'body must be JSON');
    fields = req.json as Record<string, unknown>;
  } else {
    if (!String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded'))
      return oauthError(400, 'invalid_request', 'body must be application/x-www-form-urlencoded');
    fields = Object.fromEntries(req.form);
  }
  const basic = basicCredentials(req.headers);
  if (rules.credentials === 'basic') {
    if (!basic || basic.id !== CLIENT_ID || basic.secret !== CLIENT_SECRET)
      return oauthError(401, 'invalid_client', 'bad Basic credentials');
    if ('client_secret' in fields) return oauthError(400, 'invalid_request', 'client_secret must not be in the body');
  } else {
    if (fields.client_id !== CLIENT_ID || fields.client_secret !== CLIENT_SECRET)
      return oauthError(401, 'invalid_client', 'bad client credentials');
    if (req.headers.authorization) return oauthError(400, 'invalid_request', 'credentials given twice');
  }
  if (fields.grant_type !== 'authorization_code') return oauthError(400, 'unsupported_grant_type', String(fields.grant_type));
  if (fields.code !== rules.code) return oauthError(400, 'invalid_grant', 'unknown code');
  if (fields.redirect_uri !== REDIRECT_URI) return oauthError(400, 'invalid_grant', 'redirect_uri mismatch');
  if (rules.codeChallenge !== undefined) {
    const verifier = typeof fields.code_verifier === 'string' ? fields.code_verifier : '';
    if (!verifier || s256(verifier) !== rules.codeChallenge) return oauthError(400, 'invalid_request', 'code_verifier does not match');
  }
  return null;
}

export const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

/** A user API call must carry the access token as a bearer credential. */
export function checkBearer(req: FakeRequest, accessToken: string): FakeAnswer | null {
  if (req.headers.authorization !== `Bearer ${accessToken}`) return { status: 401, json: { message: '401: Unauthorized', code: 0 } };
  return null;
}

// ---------------------------------------------------------------------------------------------------
// OAuth 1.0a (RFC 5849), verified here from first principles so the test does not trust the library it tests

const percentEncode = (s: string) => encodeURIComponent(s).replace(/[!*'()]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The `OAuth k="v", …` header's parameters, decoded. */
export function oauthHeaderParams(headers: http.IncomingHttpHeaders): Map<string, string> | null {
  const header = headers.authorization ?? '';
  if (!header.startsWith('OAuth ')) return null;
  const params = new Map<string, string>();
  for (const part of header.slice(6).split(',')) {
    const match = /^\s*([^=\s]+)="([^"]*)"\s*$/.exec(part);
    if (!match) return null;
    params.set(decodeURIComponent(match[1]), decodeURIComponent(match[2]));
  }
  return params;
}

export interface OAuth1Check {
  consumerKey: string;
  consumerSecret: string;
  /** the secret of the token the request names ('' for the request-token call) */
  tokenSecret: string;
  /** the URL as the client addressed it, scheme and host included, without the query */
  baseUrl: string;
  /** nonces already seen, shared across a fake's requests */
  seenNonces: Set<string>;
}

/** Null when the request's HMAC-SHA1 signature is right; else the reason (RFC 5849 §3.4.1, §3.4.2). */
export function oauth1Problem(req: FakeRequest, check: OAuth1Check): string | null {
  const header = oauthHeaderParams(req.headers);
  if (!header) return 'no OAuth Authorization header';
  if (header.get('oauth_consumer_key') !== check.consumerKey) return 'unknown consumer key';
  if (header.get('oauth_signature_method') !== 'HMAC-SHA1') return 'signature method is not HMAC-SHA1';
  if (header.has('oauth_version') && header.get('oauth_version') !== '1.0') return 'bad oauth_version';
  const timestamp = Number(header.get('oauth_timestamp'));
  if (!Number.isInteger(timestamp) || Math.abs(timestamp - Date.now() / 1000) > 300) return 'timestamp out of range';
  const nonce = header.get('oauth_nonce') ?? '';
  if (!nonce || check.seenNonces.has(nonce)) return 'nonce missing or reused';
  const given = header.get('oauth_signature') ?? '';
  const pairs: [string, string][] = [];
  for (const [k, v] of header) if (k !== 'oauth_signature' && k !== 'realm') pairs.push([percentEncode(k), percentEncode(v)]);
  for (const [k, v] of req.query) pairs.push([percentEncode(k), percentEncode(v)]);
  for (const [k, v] of req.form) pairs.push([percentEncode(k), percentEncode(v)]);
  pairs.sort(([ak, av], [bk, bv]) => (ak === bk ? (av < bv ? -1 : av > bv ? 1 : 0) : ak < bk ? -1 : 1));
  const normalized = pairs.map(([k, v]) => `${k}=${v}`).join('&');
  const base = `${req.method.toUpperCase()}&${percentEncode(check.baseUrl)}&${percentEncode(normalized)}`;
  const key = `${percentEncode(check.consumerSecret)}&${percentEncode(check.tokenSecret)}`;
  const expected = createHmac('sha1', key).update(base).digest();
  const actual = Buffer.from(given, 'base64');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return 'signature does not match';
  check.seenNonces.add(nonce);
  return null;
}

// ---------------------------------------------------------------------------------------------------
// Routes most fakes are made of

/** A token endpoint: the grant as the provider checks it, then the provider's token answer. */
export const tokenEndpoint =
  (rules: CodeGrantRules, answer: unknown): Route =>
  (req) =>
    checkCodeGrant(req, rules) ?? { json: answer };

/** A user API endpoint: bearer token (and `check`, for what else the provider requires), then its answer. */
export const userEndpoint =
  (accessToken: string, answer: unknown, check: (req: FakeRequest) => FakeAnswer | null = () => null): Route =>
  (req) =>
    checkBearer(req, accessToken) ?? check(req) ?? { json: answer };
