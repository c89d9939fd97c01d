// redirect_to validation: a target is parsed by the WHATWG URL parser first, refused outright when it carries
// userinfo, backslashes, whitespace or control characters, then accepted when it shares SITE_URL's scheme,
// host and port (any port for loopback hosts); else a host written as an IP address that is not a loopback
// one is refused for every scheme, allow list or not, as the original refuses it; else it must match a
// URI_ALLOW_LIST entry part by part (a loopback address too: docs/differences.md). Only the
// parsed, normalised href is handed on. A request without an acceptable target falls back to its Referer
// header, checked alike, then to SITE_URL, silently, as the original does, so a hostile link can never
// send tokens elsewhere (docs/redirects.md).
import type { Config } from '../config/types.js';
import ipaddr from 'ipaddr.js';
import { compileAllowPattern } from './redirect-patterns.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const HOSTNAME = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;
// Characters browsers strip, fold or treat as `/` before a URL parser sees them: never part of a target.
// eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
const REFUSED_CHARACTERS = /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f\u3000\ufeff\\]/;

// Schemes that run script or show local content on the page that follows them (the redirect page's link
// included: docs/redirects.md#the-check): never a target, though an entry like `*://app.example/**` names them.
const SCRIPT_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:']);

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
    if (url.username || url.password || SCRIPT_SCHEMES.has(url.protocol)) return null;
    if (url.href === site.href) return config.siteUrl; // the site itself, as the operator wrote it
    const sameSite =
      url.protocol === site.protocol && url.hostname === site.hostname && (url.port === site.port || LOOPBACK.has(url.hostname));
    if (sameSite) return url.href;
    const ip = ipHost(url.hostname);
    if ((ip && ip.range() !== 'loopback') || !acceptableHost(url)) return null;
    return allowed.some((matches) => matches(url)) ? url.href : null;
  };
}

/** The address a host names when it is written as one: dotted IPv4 (four decimal parts) or bracketed IPv6. */
function ipHost(host: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) return ipaddr.IPv4.parse(host);
  const inner = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : '';
  // An IPv4-mapped address counts as its IPv4 address, as Go's IsLoopback reads it.
  return inner && ipaddr.IPv6.isValid(inner) ? ipaddr.process(inner) : null;
}

function acceptableHost(url: URL): boolean {
  const host = url.hostname;
  if (/^\d+$/.test(host)) return false; // an integer host is an address in disguise, for any scheme
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return true; // app schemes (myapp://) are matched by the allow list
  return LOOPBACK.has(host) || HOSTNAME.test(host);
}

type TargetContext = { redirect: RedirectCheck; config: Pick<Config, 'siteUrl'> };

/** The `redirect_to` header, which the HTTP guard hands on as `redirect-to`, a name uWS can parse (docs/http-guard.md); '' when none. */
export const redirectToHeader = (headers: Record<string, string>): string => headers['redirect-to'] ?? '';

/**
 * The redirect target a request names: the `redirect_to` header, else the form's parameter, from the query
 * or a posted urlencoded body (ApiRequest.form), as the original's ParseForm reads it.
 */
function requestedRedirect(headers: Record<string, string>, form: URLSearchParams): string | undefined {
  return redirectToHeader(headers) || form.get('redirect_to') || undefined;
}

/**
 * The redirect target of a request, as the original resolves it (and logs it as the request line's
 * `referer`): the target it names when that passes the check, else its `Referer` header when that does (a
 * page of an allowed app that sent no redirect_to gets its users back), else SITE_URL.
 */
export const redirectTarget = (req: { headers: Record<string, string>; form: URLSearchParams }, ctx: TargetContext): string =>
  ctx.redirect(requestedRedirect(req.headers, req.form)) ?? ctx.redirect(req.headers.referer) ?? ctx.config.siteUrl;
