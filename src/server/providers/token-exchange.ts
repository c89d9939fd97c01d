// The authorization-code grant (RFC 6749 §4.1.3) as each provider wants it sent: a form or a JSON body,
// and the client credentials either in an HTTP Basic header or as body fields. The answer must carry an
// access token; a provider that reports its error inside a 200 (Slack's `ok: false`) is refused too.
import { flowClientId } from './base-url.js';
import { jsonObject, ProviderError } from './outbound.js';
import type { ProviderRuntime, ProviderTokens } from './types.js';

export interface CodeGrant {
  tokenUrl: string;
  code: string;
  /** 'basic': `Authorization: Basic` with the form-encoded id and secret (RFC 6749 §2.3.1); 'body': client_id and client_secret fields */
  credentials: 'basic' | 'body';
  /** how the body is encoded; every provider but Notion takes a form */
  encoding?: 'form' | 'json';
  /** PKCE verifier, for providers that were sent a challenge (X) */
  codeVerifier?: string;
}

const formEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);

export async function exchangeAuthorizationCode(rt: ProviderRuntime, grant: CodeGrant): Promise<ProviderTokens> {
  const clientId = flowClientId(rt.config);
  const fields: Record<string, string> = { grant_type: 'authorization_code', code: grant.code, redirect_uri: rt.config.redirectUri };
  if (grant.codeVerifier) fields.code_verifier = grant.codeVerifier;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (grant.credentials === 'basic') {
    const pair = `${formEncode(clientId)}:${formEncode(rt.config.secret)}`;
    headers.Authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    fields.client_id = clientId;
    fields.client_secret = rt.config.secret;
  }
  let body: string;
  if (grant.encoding === 'json') {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(fields);
  } else {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(fields).toString();
  }
  const answer = await jsonObject(await rt.fetch(grant.tokenUrl, { method: 'POST', headers, body }));
  return tokensFrom(answer, new URL(grant.tokenUrl).host);
}

/** The token answer read into ProviderTokens; no access token means the exchange failed whatever the status. */
export function tokensFrom(answer: Record<string, unknown>, host: string): ProviderTokens {
  const accessToken = typeof answer.access_token === 'string' ? answer.access_token : '';
  if (!accessToken || answer.ok === false) {
    const reason = typeof answer.error === 'string' ? `: ${answer.error}` : '';
    throw new ProviderError(`${host} answered the code exchange without an access token${reason}`);
  }
  const string = (key: string) => (typeof answer[key] === 'string' ? answer[key] : '');
  return { accessToken, refreshToken: string('refresh_token'), idToken: string('id_token'), response: answer };
}
