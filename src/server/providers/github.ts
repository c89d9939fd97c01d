// GitHub: plain OAuth 2.0 (REFERENCE §9.2). Authorization and token on github.com; the person from the REST
// API: /user (id, login, name, avatar) and /user/emails (every address, primary and verified flags).
// EXTERNAL_GITHUB_URL names a GitHub Enterprise host, whose API is <URL>/api/v3; EXTERNAL_GITHUB_API_URL
// replaces the API base outright (tests).
import type { ExternalEmail, OAuth2Provider, ProviderRuntime } from './types.js';
import { baseUrl, exchangeAuthorizationCode, fetchJson } from './code-exchange.js';
import { jsonArray, ProviderError } from './outbound.js';

const site = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'https://github.com');
const api = (rt: ProviderRuntime) =>
  rt.config.apiUrl ? baseUrl(rt.config.apiUrl, '') : rt.config.url ? `${baseUrl(rt.config.url, '')}/api/v3` : 'https://api.github.com';

// GitHub's REST API asks for its media type and a User-Agent on every call.
const API_HEADERS = { Accept: 'application/vnd.github+json', 'User-Agent': 'portcullis' };

export const github: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'github',
  defaultScopes: ['user:email'],
  scopeSeparator: ' ',
  pkceToProvider: false,
  authorizationEndpoint(rt) {
    return Promise.resolve(`${site(rt)}/login/oauth/authorize`);
  },
  exchangeCode(rt, code, codeVerifier) {
    return exchangeAuthorizationCode(rt, `${site(rt)}/login/oauth/access_token`, code, codeVerifier);
  },
  async fetchProfile(rt, tokens) {
    const user = await fetchJson(rt, `${api(rt)}/user`, tokens.accessToken, API_HEADERS);
    if (typeof user.id !== 'number' && typeof user.id !== 'string') throw new ProviderError('github: /user has no id');
    const listed = await jsonArray(
      await rt.fetch(`${api(rt)}/user/emails`, { headers: { Authorization: `Bearer ${tokens.accessToken}`, ...API_HEADERS } }),
    );
    const emails: ExternalEmail[] = listed
      .filter(
        (e): e is { email: string; verified?: unknown; primary?: unknown } => !!e && typeof (e as { email?: unknown }).email === 'string',
      )
      .map((e) => ({ email: e.email, verified: e.verified === true, primary: e.primary === true }))
      .sort((a, b) => Number(b.primary) - Number(a.primary));
    const primary = emails[0];
    const sub = String(user.id);
    const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
    const claims: Record<string, unknown> = {
      iss: api(rt),
      sub,
      provider_id: sub,
      name: str(user.name),
      full_name: str(user.name),
      user_name: str(user.login),
      preferred_username: str(user.login),
      // avatar_url only: the original's GitHub reader writes no picture.
      avatar_url: str(user.avatar_url),
      email: primary?.email,
      email_verified: primary ? primary.verified : undefined,
    };
    return { subject: sub, emails, claims: Object.fromEntries(Object.entries(claims).filter(([, v]) => v !== undefined)) };
  },
};
