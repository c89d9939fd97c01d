// A URI as the original reads the URI and Resources lines of a sign-in message (Go's url.ParseRequestURI):
// an absolute URI or an absolute path. Only what the checks need is kept: the scheme, the host as written
// (port included) and its name (docs/web3.md#the-checks).
import { parsesAsRequestUri } from '../oauth-server/uri-parts.js';

export interface RequestUri {
  text: string;
  /** lower-cased, '' for an absolute path */
  scheme: string;
  /** host[:port] exactly as written, '' when there is no authority */
  host: string;
  /** host without port and IPv6 brackets */
  hostname: string;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what a URL may not hold
const CONTROL = /[\u0000-\u001f\u007f]/;

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const REG_NAME = /^(?:[A-Za-z0-9\-._~!$&'()*+,;=\u0080-\uffff]|%[0-9A-Fa-f]{2})*$/;

export function parseRequestUri(text: string): RequestUri | null {
  // What Go's parser refuses (a bad escape, bad user info, an escaped ASCII byte in the host) is refused first.
  if (!text || CONTROL.test(text) || !parsesAsRequestUri(text)) return null;
  if (text.startsWith('/')) return { text, scheme: '', host: '', hostname: '' };
  const scheme = SCHEME.exec(text)?.[1];
  if (!scheme) return null;
  const rest = text.slice(scheme.length + 1).split('?')[0];
  if (!rest.startsWith('//')) return { text, scheme: scheme.toLowerCase(), host: '', hostname: '' }; // opaque (mailto:…)
  const authority = rest.slice(2).split('/')[0];
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  const hostname = hostnameOf(host);
  return hostname === null ? null : { text, scheme: scheme.toLowerCase(), host, hostname };
}

function hostnameOf(host: string): string | null {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end < 0 || !/^(:\d*)?$/.test(host.slice(end + 1))) return null;
    return host.slice(1, end);
  }
  const colon = host.indexOf(':');
  const name = colon < 0 ? host : host.slice(0, colon);
  if (colon >= 0 && !/^\d*$/.test(host.slice(colon + 1))) return null;
  return REG_NAME.test(name) ? name : null;
}
