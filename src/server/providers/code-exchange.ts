// The authorization-code grant at a provider's token endpoint (RFC 6749 §4.1.3), shared by the modules:
// client credentials in the form body (what every listed provider accepts) or HTTP Basic, and the
// answer read as ProviderTokens. A provider that answers 200 with {"error": ...} (GitHub does) is a failure.
import { jsonObject, ProviderError } from './outbound.js';
import type { ProviderRuntime, ProviderTokens } from './types.js';
import { clientIds } from './configured.js';

export interface ExchangeOptions {
  /** how the client authenticates: form fields (default) or HTTP Basic */
  clientAuth?: 'body' | 'basic';
  /** extra headers (GitHub wants Accept: application/json) */
  headers?: Record<string, string>;
}

export async function exchangeAuthorizationCode(
  rt: ProviderRuntime,
  tokenUrl: string,
  code: string,
  codeVerifier: string | undefined,
  options: ExchangeOptions = {},
): Promise<ProviderTokens> {
  const clientId = clientIds(rt.config)[0];
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: rt.config.redirectUri });
  const headers: Record<string, string> = {
    'Content-Type': 'application/x-www-form-urlencoded',
    Accept: 'application/json',
    ...options.headers,
  };
  if (options.clientAuth === 'basic') {
    headers.Authorization = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(rt.config.secret)}`).toString('base64')}`;
  } else {
    form.set('client_id', clientId);
    form.set('client_secret', rt.config.secret);
  }
  if (codeVerifier) form.set('code_verifier', codeVerifier);
  const body = await jsonObject(await rt.fetch(tokenUrl, { method: 'POST', headers, body: form }));
  return tokensOf(body, tokenUrl);
}

export function tokensOf(body: Record<string, unknown>, from: string): ProviderTokens {
  if (typeof body.error === 'string') {
    throw new ProviderError(`${new URL(from).host} refused the code: ${body.error}`);
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : '');
  const accessToken = text(body.access_token);
  if (!accessToken) throw new ProviderError(`${new URL(from).host} answered without an access_token`);
  return { accessToken, refreshToken: text(body.refresh_token), idToken: text(body.id_token), response: body };
}

/** A GET of the provider's user API with the access token as a bearer. */
export async function fetchJson(rt: ProviderRuntime, url: string, accessToken: string, headers: Record<string, string> = {}) {
  return jsonObject(await rt.fetch(url, { headers: { Authorization: `Bearer ${accessToken}`, Accept: 'application/json', ...headers } }));
}

/** `base` without trailing slashes, or the default when the setting is empty. */
export const baseUrl = (configured: string, fallback: string) => (configured || fallback).replace(/\/+$/, '');
