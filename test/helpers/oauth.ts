// Driving the service's OAuth flow over HTTP: GET /authorize (its 302 to the provider), the provider's
// answer replayed at GET|POST /callback, and the pieces of the final redirect.
import { startTestService, type TestService } from './server.js';
import { startGithubFake, type GithubFake } from './github.js';
import { REDIRECT_URI } from './oidc-provider.js';

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

/** GitHub switched on against the local fake (helpers/github.ts), its API on the same server. */
export function githubEnv(gh: GithubFake) {
  return providerEnv('github', {
    clientId: gh.clientId,
    secret: gh.clientSecret,
    redirectUri: REDIRECT_URI,
    url: gh.base,
    apiUrl: gh.base,
  });
}

/** The service with GitHub (the local fake) and manual linking on; `stop` ends both. */
export async function startGithubLinking(env: Record<string, string> = {}) {
  const gh = await startGithubFake();
  const api = await startTestService({ ...githubEnv(gh), AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true', ...env });
  const stop = async () => {
    await api.stop();
    await gh.stop();
  };
  return { gh, api, stop };
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
