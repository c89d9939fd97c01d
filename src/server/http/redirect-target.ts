// redirect_to validation: a target is parsed by the WHATWG URL parser first, refused outright when it carries
// userinfo, backslashes, whitespace or control characters, then accepted when it shares SITE_URL's scheme,
// host and port (any port for loopback hosts) or matches a URI_ALLOW_LIST entry part by part. Only the
// parsed, normalised href is handed on. A request without an acceptable target falls back to its Referer
// header, checked alike, then to SITE_URL, silently, as the original does, so a hostile link can never
// send tokens elsewhere (docs/redirects.md).
import type { Config } from '../config/types.js';
import { compileAllowPattern } from './redirect-patterns.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const HOSTNAME = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;
// Characters browsers strip, fold or treat as `/` before a URL parser sees them: never part of a target.
// eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
const REFUSED_CHARACTERS = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff\\]/;

/** The normalised href of an acceptable redirect target, or null when it must not be used. */
export type RedirectCheck = (target: string | undefined | null) => string | null;

export function createRedirectCheck(config: Pick<Config, 'siteUrl' | 'uriAllowList'>): RedirectCheck {
  const site = new URL(config.siteUrl);
  const allowed = config.uriAllowList.map(compileAllowPattern);
  return (target) => {
    if (!target || REFUSED_CHARACTERS.test(target)) return null;
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return null;
    }
    if (url.username || url.password || !acceptableHost(url)) return null;
    if (url.href === site.href) return config.siteUrl; // the site itself, as the operator wrote it
    const sameSite =
      url.protocol === site.protocol && url.hostname === site.hostname && (url.port === site.port || LOOPBACK.has(url.hostname));
    return sameSite || allowed.some((matches) => matches(url)) ? url.href : null;
  };
}

function acceptableHost(url: URL): boolean {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return true; // app schemes (myapp://) are matched by the allow list
  const host = url.hostname;
  if (LOOPBACK.has(host)) return true;
  if (/^\d+$/.test(host) || /^[\d.]+$/.test(host) || host.startsWith('[')) return false; // integer and IP literal hosts
  return HOSTNAME.test(host);
}

type TargetContext = { redirect: RedirectCheck; config: Pick<Config, 'siteUrl'> };

/**
 * The redirect target a request names: the `redirect_to` header (which the HTTP guard hands on as
 * `redirect-to`, a name uWS can parse: docs/http-guard.md), else the query parameter.
 */
function requestedRedirect(headers: Record<string, string>, query: URLSearchParams): string | undefined {
  return headers['redirect-to'] || query.get('redirect_to') || undefined;
}

/**
 * The redirect target of a request, as the original resolves it (and logs it as the request line's
 * `referer`): the target it names when that passes the check, else its `Referer` header when that does (a
 * page of an allowed app that sent no redirect_to gets its users back), else SITE_URL.
 */
export const redirectTarget = (req: { headers: Record<string, string>; query: URLSearchParams }, ctx: TargetContext): string =>
  ctx.redirect(requestedRedirect(req.headers, req.query)) ?? ctx.redirect(req.headers.referer) ?? ctx.config.siteUrl;
