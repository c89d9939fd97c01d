// CORS as the original's rs/cors setup (docs/api.md#cors): every origin allowed, answered with the wildcard
// `*` (with Access-Control-Allow-Credentials: true, which browsers do not honour beside `*`, so no page can
// read an answer with the user's cookies); preflights are answered here and never reach a handler.
const ALLOWED_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
const ALLOWED_HEADERS = new Set([
  'accept',
  'authorization',
  'content-type',
  'x-client-ip',
  'x-client-info',
  'x-jwt-aud',
  'x-use-cookie',
  'x-supabase-api-version',
  'origin',
  'apikey',
  'x-requested-with',
]);
const EXPOSED = 'X-Total-Count, Link, X-Supabase-Api-Version, Retry-After';

// Shared by every request without an Origin (server-to-server callers, most of a load): never mutated,
// callers copy it into the answer's own headers.
const NO_ORIGIN: Readonly<Record<string, string>> = Object.freeze({ Vary: 'Origin' });

/** Headers to add to an ordinary response. Read-only: copy before adding to them. */
export function corsHeaders(origin: string | undefined): Readonly<Record<string, string>> {
  if (!origin) return NO_ORIGIN;
  return {
    Vary: 'Origin',
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Expose-Headers': EXPOSED,
  };
}

/**
 * The answer to an OPTIONS preflight, or null when the request is not one. `extraHeaders`:
 * CORS_ALLOWED_HEADERS, allowed beside the fixed list, as the original appends them to its own.
 */
export function preflight(
  method: string,
  headers: Record<string, string>,
  extraHeaders: readonly string[] = [],
): { status: number; headers: Record<string, string> } | null {
  const origin = headers.origin;
  const requested = headers['access-control-request-method'];
  if (method !== 'OPTIONS' || !requested) return null;
  const vary = { Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers' };
  // A preflight without an Origin is still a preflight: answered, with nothing allowed.
  if (!origin) return { status: 204, headers: vary };
  const wantHeaders = (headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  // A `*` among CORS_ALLOWED_HEADERS allows every header, as the original's CORS library reads it.
  const allowed = (h: string) => ALLOWED_HEADERS.has(h) || extraHeaders.some((extra) => extra === '*' || extra.toLowerCase() === h);
  if (!ALLOWED_METHODS.has(requested.toUpperCase()) || !wantHeaders.every(allowed)) {
    return { status: 204, headers: vary };
  }
  const out: Record<string, string> = {
    ...vary,
    'Access-Control-Allow-Origin': '*',
    'Access-Control-Allow-Credentials': 'true',
    'Access-Control-Allow-Methods': requested.toUpperCase(),
  };
  if (wantHeaders.length) out['Access-Control-Allow-Headers'] = wantHeaders.join(', ');
  return { status: 204, headers: out };
}
