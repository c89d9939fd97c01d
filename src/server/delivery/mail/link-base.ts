// The base URL of this request's mail links, and of the send email hook's `site_url`
// (docs/one-time-codes-and-mail.md#links). API_EXTERNAL_URL, unless MAILER_EXTERNAL_HOSTS lists the
// request's X-Forwarded-Host: one deployment then serves several public host names, and each user's
// links lead back to the host they used. Only a listed host is taken, so a client cannot point another
// user's links elsewhere with a header of its own; as in the original, the Host header does not count.
import type { Config } from '../../config/types.js';

export interface LinkBaseRequest {
  headers?: Readonly<Record<string, string>>;
}

export function mailLinkBase(config: Pick<Config, 'api' | 'mailer'>, req: LinkBaseRequest): string {
  const hosts = config.mailer.externalHosts;
  const forwardedHost = hosts.length > 0 ? req.headers?.['x-forwarded-host'] : undefined;
  if (!forwardedHost || !hosts.includes(forwardedHost)) return config.api.externalUrl;
  // https, except for localhost when the proxy says the request came over http (local development).
  const protocol = forwardedHost === 'localhost' && req.headers?.['x-forwarded-proto'] === 'http' ? 'http' : 'https';
  return `${protocol}://${forwardedHost}`;
}
