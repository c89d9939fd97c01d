// Driving the service's OAuth flow over HTTP: GET /authorize (its 302 to the provider), the provider's
// answer replayed at GET|POST /callback, and the pieces of the final redirect.
import type { TestService } from './server.js';

export function providerEnv(
  name: string,
  settings: { clientId: string; secret: string; redirectUri: string; url?: string; apiUrl?: string },
) {
  const env = `AUTH_EXTERNAL_${name.toUpperCase()}`;
  return {
    [`${env}_ENABLED`]: 'true',
    [`${env}_CLIENT_ID`]: settings.clientId,
    [`${env}_SECRET`]: settings.secret,
    [`${env}_REDIRECT_URI`]: settings.redirectUri,
    ...(settings.url ? { [`${env}_URL`]: settings.url } : {}),
    ...(settings.apiUrl ? { [`${env}_API_URL`]: settings.apiUrl } : {}),
  };
}

/** GET /authorize?<query>: the provider URL it redirects to. */
export async function authorizeUrl(api: TestService, query: string): Promise<URL> {
  const res = await api.request('GET', `/authorize?${query}`);
  if (res.status !== 302) throw new Error(`/authorize answered ${res.status}: ${res.text}`);
  return new URL(res.headers.get('location')!);
}

/** GET /callback with the provider's parameters: the Location the service answers. */
export async function callback(
  api: TestService,
  params: URLSearchParams,
  method: 'GET' | 'POST' = 'GET',
): Promise<{ status: number; location: URL }> {
  const res =
    method === 'GET'
      ? await api.request('GET', `/callback?${params}`)
      : await api.request('POST', '/callback', {
          raw: params.toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        });
  const location = res.headers.get('location');
  if (!location) throw new Error(`/callback answered ${res.status} without a redirect: ${res.text}`);
  return { status: res.status, location: new URL(location) };
}

export const fragmentOf = (url: URL) => Object.fromEntries(new URLSearchParams(url.hash.slice(1)));
export const queryOf = (url: URL) => Object.fromEntries(url.searchParams);
