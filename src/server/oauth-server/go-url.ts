// A redirect URI as the original writes it back after reading it (Go's url.Parse, then URL.String): the
// scheme lower-cased, the user info, host and path escaped again by Go's rules (a host's non-ASCII
// characters as %XX, not punycode; a path kept as written unless it holds a character Go escapes), an
// empty fragment's `#` dropped, and nothing else normalised (no `/` added to an empty path, no default port
// or `..` removed, the host's case kept), which a browser's URL parser would all change. The query is the
// caller's (redirects.ts). Only a registered redirect URI comes here, which that parser took
// (redirect-uri.ts), so its escapes are well formed.

/** Bytes Go's escaping leaves as they are, per part of a URL (its shouldEscape). */
const HOST_KEPT = /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]$/;
const USER_KEPT = /^[A-Za-z0-9\-_.~$&+,;=]$/;
const PATH_KEPT = /^[A-Za-z0-9\-_.~$&+,/:;=@]$/;
const QUERY_KEPT = /^[A-Za-z0-9\-_.~]$/;
/** A path Go writes back as it was written: only these characters and escapes (its validEncoded). */
const PATH_AS_WRITTEN = /^[A-Za-z0-9\-_.~!$&'()*+,;=:@[\]%/]*$/;

export interface GoUrlParts {
  /** scheme, authority and path, as Go writes them back */
  base: string;
  /** the query as written, without its `?` ('' when none) */
  query: string;
}

export function goUrlParts(uri: string): GoUrlParts {
  const beforeFragment = uri.split('#', 1)[0];
  const question = beforeFragment.indexOf('?');
  const query = question < 0 ? '' : beforeFragment.slice(question + 1);
  const rest = question < 0 ? beforeFragment : beforeFragment.slice(0, question);
  const colon = rest.indexOf(':');
  const scheme = rest.slice(0, colon).toLowerCase();
  const hierarchy = rest.slice(colon + 1);
  // no authority (an opaque URI, which no registered redirect URI is): written back as it was
  if (!hierarchy.startsWith('//')) return { base: `${scheme}:${hierarchy}`, query };
  const slash = hierarchy.indexOf('/', 2);
  const authority = slash < 0 ? hierarchy.slice(2) : hierarchy.slice(2, slash);
  const path = slash < 0 ? '' : hierarchy.slice(slash);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : `${goUserinfo(authority.slice(0, at))}@`;
  const host = reescaped(authority.slice(at + 1), HOST_KEPT);
  return { base: `${scheme}://${userinfo}${host}${PATH_AS_WRITTEN.test(path) ? path : reescaped(path, PATH_KEPT)}`, query };
}

/** A user name and, after the first `:`, a password, each escaped again. */
function goUserinfo(userinfo: string): string {
  const colon = userinfo.indexOf(':');
  if (colon < 0) return reescaped(userinfo, USER_KEPT);
  return `${reescaped(userinfo.slice(0, colon), USER_KEPT)}:${reescaped(userinfo.slice(colon + 1), USER_KEPT)}`;
}

/**
 * One side of a query pair as Go's url.Values reads it (`+` a space) and url.QueryEscape writes it again,
 * or null where its reading fails (a malformed `%` escape), which drops the pair.
 */
export function goQueryReescaped(raw: string): string | null {
  return /%(?![0-9A-Fa-f]{2})/.test(raw) ? null : reescaped(raw, QUERY_KEPT, true);
}

/** Escaped text's bytes, one character each (0-255), so that `<` compares them in Go's byte order. */
export const escapedBytes = (escaped: string): string =>
  escaped.replace(/\+/g, ' ').replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * Escaped text unescaped and escaped again as Go does, byte by byte (an escape of a byte that is no UTF-8
 * character stays one): bytes `kept` matches as they are, every other as an upper-case %XX; in a query a
 * space (written `+`, `%20` or as is) becomes `+`.
 */
function reescaped(raw: string, kept: RegExp, query = false): string {
  const byte = (b: number): string => {
    if (query && b === 0x20) return '+';
    const c = String.fromCharCode(b);
    return b < 0x80 && kept.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  };
  return raw.replace(/%([0-9A-Fa-f]{2})|[^]/gu, (m: string, hex: string | undefined) => {
    if (hex) return byte(parseInt(hex, 16));
    if (query && m === '+') return '+';
    return [...Buffer.from(m)].map(byte).join('');
  });
}
