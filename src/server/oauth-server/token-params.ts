// POST /oauth/token's parameters, from a form body (RFC 6749) or a JSON one, as the original reads both.
// A JSON body that does not parse, or a member that is not a string, is the OAuth error invalid_request.
import { OAuthRefusal } from '../grants/oauth-refusal.js';
import type { ApiRequest } from '../http/types.js';

export const TOKEN_PARAMS = [
  'grant_type',
  'code',
  'refresh_token',
  'redirect_uri',
  'client_id',
  'client_secret',
  'code_verifier',
  'resource',
] as const;
export type TokenParams = Record<(typeof TOKEN_PARAMS)[number], string>;

export function readTokenParams(req: ApiRequest<unknown>): TokenParams {
  const params = Object.fromEntries(TOKEN_PARAMS.map((n) => [n, ''])) as TokenParams;
  if ((req.headers['content-type'] ?? '').includes('application/json')) {
    let body: Record<string, unknown>;
    try {
      body = req.json();
    } catch {
      throw new OAuthRefusal('invalid_request', 'Invalid JSON body');
    }
    for (const name of TOKEN_PARAMS) {
      const v = body[name];
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string') throw new OAuthRefusal('invalid_request', 'Invalid JSON body');
      params[name] = v;
    }
    return params;
  }
  const form = new URLSearchParams(req.rawBody.toString('utf8'));
  // the original reads the form only; a resource is honoured from a JSON body
  for (const name of TOKEN_PARAMS) if (name !== 'resource') params[name] = form.get(name) ?? '';
  return params;
}
