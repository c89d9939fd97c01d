// A redirect URI taken apart as the original's parser takes it apart (Go's url.Parse, with its strict
// colons in http and https hosts), so the redirect URI rules (redirect-uri.ts) read the parts the original
// reads: the host as written, not a browser's normalised one (`http://LOCALHOST/cb` keeps its capitals,
// `https:///cb` has no host, `https:example.com/cb` is opaque). Escapes are checked, not decoded: a host
// may escape only non-ASCII bytes and `%`, so decoding could not turn it into another ASCII name.
import { isIPv6 } from 'node:net';

export interface UriParts {
  /** lower-cased; '' when the text has none */
  scheme: string;
  /** host[:port] as written; '' when there is no authority or it names no host */
  host: string;
  /** the host without its port and IPv6 brackets */
  hostname: string;
  /** everything between the first '?' and the fragment; '' when there is none or it is empty */
  query: string;
  /** everything after the first '#' */
  fragment: string;
}

// eslint-disable-next-line no-control-regex -- control characters are exactly what a URL may not hold
const CONTROL = /[\u0000-\u001f\u007f]/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const BAD_ESCAPE = /%(?![0-9A-Fa-f]{2})/;
/** ":" and digits, or nothing: a port the original's parser takes (any number of digits). */
const OPTIONAL_PORT = /^(?::[0-9]*)?$/;
const USERINFO = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/;
/** The ASCII a host may hold unescaped: unreserved, sub-delims, and the few more the original lets through. */
const HOST_ASCII = /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]$/;

/**
 * The parts, or null where the original's parser fails (its "invalid URL format"). `asRequestUri`: read as
 * Go's url.ParseRequestURI reads it, where a `#` starts no fragment and is one more character of the part it
 * is in (so one in the authority fails its user-info or host rules).
 */
export function uriParts(text: string, asRequestUri = false): UriParts | null {
  const hash = asRequestUri ? -1 : text.indexOf('#');
  const beforeFragment = hash < 0 ? text : text.slice(0, hash);
  const fragment = hash < 0 ? '' : text.slice(hash + 1);
  if (CONTROL.test(beforeFragment) || BAD_ESCAPE.test(fragment)) return null;
  if (beforeFragment.startsWith(':')) return null; // a scheme that is empty
  const scheme = SCHEME.exec(beforeFragment)?.[1] ?? '';
  const question = beforeFragment.indexOf('?');
  const query = question < 0 ? '' : beforeFragment.slice(question + 1);
  const parts: UriParts = { scheme: scheme.toLowerCase(), host: '', hostname: '', query, fragment };
  const rest = beforeFragment.slice(scheme ? scheme.length + 1 : 0, question < 0 ? undefined : question);
  if (!rest.startsWith('/')) {
    if (scheme) return parts; // opaque (scheme:rest): no authority
    // without a scheme, a colon in the first segment is a scheme spelled wrong
    if (rest.split('/')[0].includes(':')) return null;
  }
  let path = rest;
  if ((scheme || !rest.startsWith('///')) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    path = slash < 0 ? '' : rest.slice(slash);
    const host = hostOf(parts.scheme, authority);
    if (host === null) return null;
    parts.host = host;
    parts.hostname = hostnameOf(host);
  }
  return BAD_ESCAPE.test(path) ? null : parts;
}

/**
 * Go's url.ParseRequestURI, as the original checks a client's client_uri and logo_uri and a Web3 message's
 * URI and resources: no control byte, every escape before the query well formed (a `#` is no fragment
 * there; the query is kept raw, unchecked), and either an absolute path or a URL with a scheme whose
 * authority the original's parser takes.
 */
export function parsesAsRequestUri(text: string): boolean {
  if (CONTROL.test(text) || BAD_ESCAPE.test(text.split('?')[0])) return false;
  if (text.startsWith('/')) return true;
  const parts = uriParts(text, true);
  return parts !== null && parts.scheme !== '';
}

/** The host[:port] of an authority (after the last '@'), the user info before it checked too. */
function hostOf(scheme: string, authority: string): string | null {
  const at = authority.lastIndexOf('@');
  const host = checkedHost(scheme, authority.slice(at + 1));
  if (host === null || at < 0) return host;
  const userinfo = authority.slice(0, at);
  return USERINFO.test(userinfo) && !BAD_ESCAPE.test(userinfo) ? host : null;
}

function checkedHost(scheme: string, host: string): string | null {
  const open = host.lastIndexOf('[');
  if (open > 0) return null;
  if (open === 0) return checkedIpLiteral(host);
  const colon = host.indexOf(':');
  if (colon >= 0) {
    // http and https hosts take one colon, before the port; other schemes' the last one
    const portAt = scheme === 'http' || scheme === 'https' ? colon : host.lastIndexOf(':');
    if (!OPTIONAL_PORT.test(host.slice(portAt))) return null;
  }
  return hostEscapesValid(host, false) ? host : null;
}

/** `[IPv6 address, optionally %25zone]:port`: only an IPv6 address may stand in brackets. */
function checkedIpLiteral(host: string): string | null {
  const close = host.lastIndexOf(']');
  if (close < 0 || !OPTIONAL_PORT.test(host.slice(close + 1))) return null;
  const inside = host.slice(1, close);
  const zoneAt = inside.indexOf('%25');
  const address = zoneAt < 0 ? inside : inside.slice(0, zoneAt);
  const zone = zoneAt < 0 ? '' : inside.slice(zoneAt);
  if (!hostEscapesValid(address, false) || !hostEscapesValid(zone, true)) return null;
  if (address.includes('%') || !isIPv6(address) || zone === '%25') return null;
  return host;
}

/**
 * The escapes and characters a host may hold: `%XX` only for a non-ASCII byte or `%25`; in an IPv6 zone,
 * `%XX` for a byte a host may hold unescaped, a space or `%25`. Non-ASCII characters pass as they are.
 */
function hostEscapesValid(s: string, zone: boolean): boolean {
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '%') {
      if (s.charCodeAt(i) < 0x80 && !HOST_ASCII.test(s[i])) return false;
      continue;
    }
    const hex = s.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return false;
    const byte = parseInt(hex, 16);
    if (hex !== '25') {
      if (!zone && byte < 0x80) return false;
      if (zone && byte !== 0x20 && !(byte < 0x80 && HOST_ASCII.test(String.fromCharCode(byte)))) return false;
    }
    i += 2;
  }
  return true;
}

/** The host without a port (after the last colon, when only digits follow) and without IPv6 brackets. */
function hostnameOf(host: string): string {
  const colon = host.lastIndexOf(':');
  const name = colon >= 0 && OPTIONAL_PORT.test(host.slice(colon)) ? host.slice(0, colon) : host;
  return name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name;
}
