// Which request parameters are credentials, by name: one rule for query-string keys, JSON body keys
// and headers, so a log line never carries their values (test/log-secrets.test.ts).

/** Parameter names whose values are secrets, wherever they appear (query or body). */
export const SECRET_KEYS: readonly string[] = [
  'password',
  'new_password',
  'current_password',
  'apikey',
  'code',
  'code_verifier',
  'auth_code',
  'token',
  'token_hash',
  'refresh_token',
  'access_token',
  'id_token',
  'provider_token',
  'provider_refresh_token',
  'captcha_token',
  'nonce',
  'otp',
  'secret',
  'client_secret',
  'password_hash',
];

/** Request headers that carry credentials. */
export const SECRET_HEADERS: readonly string[] = ['authorization', 'apikey', 'cookie', 'set-cookie', 'x-api-key'];

const NAMES = new Set(SECRET_KEYS);
// Names nobody listed yet but that plainly hold a credential (e.g. a future "recovery_token").
const SECRET_SHAPE = /(?:password|secret|token|nonce|verifier)$/;

export function isSecretKey(name: string): boolean {
  const key = name.toLowerCase();
  return NAMES.has(key) || SECRET_SHAPE.test(key);
}

/** A query string with the value of every secret parameter replaced, the rest left as sent. */
export function maskQuery(query: string): string {
  return query
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const rawKey = eq === -1 ? part : part.slice(0, eq);
      return isSecretKey(decodeKey(rawKey)) ? `${rawKey}=[redacted]` : part;
    })
    .join('&');
}

/**
 * A URL (a WHATWG-normalised href, so its first `?` starts the query and its first `#` the fragment) with
 * the secret parameters of its query and of its fragment masked: a redirect target may carry a code or a
 * token (an app's own link, an implicit-flow fragment) and is logged as the request's referer.
 */
export function maskUrl(href: string): string {
  const hash = href.indexOf('#');
  const beforeHash = hash === -1 ? href : href.slice(0, hash);
  const question = beforeHash.indexOf('?');
  const masked = question === -1 ? beforeHash : beforeHash.slice(0, question + 1) + maskQuery(beforeHash.slice(question + 1));
  return hash === -1 ? masked : `${masked}#${maskQuery(href.slice(hash + 1))}`;
}

function decodeKey(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}
