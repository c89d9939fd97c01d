// redirect_to validation (REFERENCE §1.7): a target is accepted when it shares SITE_URL's scheme, host and
// port (any port for loopback hosts) or matches a URI_ALLOW_LIST glob (picomatch); anything else falls
// back to SITE_URL silently, as the original does, so a hostile link can never send tokens elsewhere.
import picomatch from 'picomatch';
import type { Config } from './config-types.js';
import type { AppContext } from './app.js';
import type { ApiRequest } from './types.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const HOSTNAME = /^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$/;

export type RedirectCheck = (target: string | undefined | null) => string;

export function createRedirectCheck(config: Pick<Config, 'siteUrl' | 'uriAllowList'>): RedirectCheck {
  const site = new URL(config.siteUrl);
  const allowed = config.uriAllowList.map((pattern) => picomatch(pattern.split('#')[0], { dot: true }));
  return (target) => {
    if (!target) return config.siteUrl;
    let url: URL;
    try { url = new URL(target); } catch { return config.siteUrl; }
    if (!acceptableHost(url)) return config.siteUrl;
    const sameSite = url.protocol === site.protocol && url.hostname === site.hostname
      && (url.port === site.port || LOOPBACK.has(url.hostname));
    if (sameSite) return target;
    const withoutFragment = target.split('#')[0];
    return allowed.some((match) => match(withoutFragment)) ? target : config.siteUrl;
  };
}

function acceptableHost(url: URL): boolean {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return true;   // app schemes (myapp://) are matched by the allow list
  const host = url.hostname;
  if (LOOPBACK.has(host)) return true;
  if (/^\d+$/.test(host) || /^[\d.]+$/.test(host) || host.startsWith('[')) return false;   // integer and IP literal hosts
  return HOSTNAME.test(host);
}

/** The redirect target of a request: the `redirect_to` header, else the query parameter (REFERENCE §1.7). */
export function requestedRedirect(headers: Record<string, string>, query: URLSearchParams): string | undefined {
  return headers.redirect_to || query.get('redirect_to') || undefined;
}

/** The validated redirect target of a request (SITE_URL when none is given or it is not allowed). */
export const redirectTarget = (req: ApiRequest, ctx: Pick<AppContext, 'redirect'>): string => ctx.redirect(requestedRedirect(req.headers, req.query));
