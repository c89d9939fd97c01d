// URLs as the original's Go code writes them, for redirects that must match it byte for byte: a target read by
// url.Parse (or url.ParseRequestURI) and written back by URL.String, its query read as url.Values reads it
// and written by Values.Encode, and the fragment as URL.String escapes it.
// - The base (scheme, user info, host, path): the scheme lower-cased, the rest escaped again by Go's rules
//   (a host's non-ASCII characters as %XX, not punycode; a path kept as written unless it holds a
//   character Go escapes), and nothing else normalised (no `/` added to an empty path, no default port or
//   `..` removed, the host's case kept), which a browser's URL parser would all change.
// - The query: pairs sorted by name in byte order, a name's values in their order, each side escaped by
//   url.QueryEscape (`~` kept; `*`, `!`, `'`, `(` and `)` escaped; a space as `+`); a pair holding `;` or a
//   malformed escape is dropped when a query is read.
// - The fragment: as written when its escapes are valid, else escaped again; one the caller sets (the
//   original's `u.Fragment = hq.Encode()`) is escaped once more, so each `%` of the encoded text becomes `%25`.
// Only targets some URL parser already took come here (a checked redirect target, a registered redirect URI,
// the configured site URL), so their escapes are well formed.

import { goQuerySplit } from './go-query.js';

/** Bytes Go's escaping leaves as they are, per part of a URL (its shouldEscape). */
const HOST_KEPT = /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]$/;
const USER_KEPT = /^[A-Za-z0-9\-_.~$&+,;=]$/;
const PATH_KEPT = /^[A-Za-z0-9\-_.~$&+,/:;=@]$/;
const QUERY_KEPT = /^[A-Za-z0-9\-_.~]$/;
const FRAGMENT_KEPT = /^[A-Za-z0-9\-_.~$&+,/:;=?@!()*]$/;
/** A path Go writes back as it was written: only these characters and escapes (its validEncoded). */
const PATH_AS_WRITTEN = /^[A-Za-z0-9\-_.~!$&'()*+,;=:@[\]%/]*$/;
/** A fragment Go writes back as it was written (its validEncoded for a fragment). */
const FRAGMENT_AS_WRITTEN = /^[A-Za-z0-9\-_.~!$&'()*+,;=:@[\]%/?]*$/;

/** Go's url.QueryEscape: everything but [A-Za-z0-9-_.~] is %XX-escaped, and a space becomes '+'. */
export function goQueryEscape(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

/** A URL as Go holds it after parsing, each part in the form URL.String writes it. */
export interface GoUrl {
  /** scheme, authority and path */
  base: string;
  /** the raw query, without its `?` ('' when none) */
  query: string;
  /** a `?` with nothing after it, which Go keeps (its ForceQuery) */
  forceQuery: boolean;
  /** the escaped fragment, without its `#` ('' when none or empty: Go then writes no `#`) */
  fragment: string;
}

/**
 * `uri` as url.Parse reads it; with `requestUri`, as url.ParseRequestURI does, which takes no fragment: a `#`
 * is then part of the path (escaped there as %23) or of the query.
 */
export function goParse(uri: string, requestUri = false): GoUrl {
  const hash = requestUri ? -1 : uri.indexOf('#');
  const beforeFragment = hash < 0 ? uri : uri.slice(0, hash);
  const question = beforeFragment.indexOf('?');
  const query = question < 0 ? '' : beforeFragment.slice(question + 1);
  const forceQuery = question >= 0 && query === '';
  const fragment = hash < 0 ? '' : goFragment(uri.slice(hash + 1));
  const rest = question < 0 ? beforeFragment : beforeFragment.slice(0, question);
  const colon = rest.indexOf(':');
  const scheme = rest.slice(0, colon).toLowerCase();
  const hierarchy = rest.slice(colon + 1);
  // no authority (an opaque URI): written back as it was
  if (!hierarchy.startsWith('//')) return { base: `${scheme}:${hierarchy}`, query, forceQuery, fragment };
  const slash = hierarchy.indexOf('/', 2);
  const authority = slash < 0 ? hierarchy.slice(2) : hierarchy.slice(2, slash);
  const path = slash < 0 ? '' : hierarchy.slice(slash);
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : `${goUserinfo(authority.slice(0, at))}@`;
  const host = reescaped(authority.slice(at + 1), HOST_KEPT);
  const goPath = PATH_AS_WRITTEN.test(path) ? path : reescaped(path, PATH_KEPT);
  return { base: `${scheme}://${userinfo}${host}${goPath}`, query, forceQuery, fragment };
}

/** URL.String. */
export function goString(u: GoUrl): string {
  const query = u.query || u.forceQuery ? `?${u.query}` : '';
  return `${u.base}${query}${u.fragment ? `#${u.fragment}` : ''}`;
}

/** A fragment as url.Parse reads it and URL.EscapedFragment writes it back. */
function goFragment(raw: string): string {
  return FRAGMENT_AS_WRITTEN.test(raw) ? raw : reescaped(raw, FRAGMENT_KEPT);
}

/** What URL.String writes for a Fragment set to `text` (Go's escape for a fragment, byte by byte). */
export function goFragmentEscape(text: string): string {
  return [...Buffer.from(text)].map(escapedByte(FRAGMENT_KEPT)).join('');
}

/** A user name and, after the first `:`, a password, each escaped again. */
function goUserinfo(userinfo: string): string {
  const colon = userinfo.indexOf(':');
  if (colon < 0) return reescaped(userinfo, USER_KEPT);
  return `${reescaped(userinfo.slice(0, colon), USER_KEPT)}:${reescaped(userinfo.slice(colon + 1), USER_KEPT)}`;
}

/** A query pair: its two sides escaped as Encode writes them, and the name's bytes to sort by. */
export interface GoQueryPair {
  name: string;
  value: string;
  order: string;
}

/**
 * url.Values read from a raw query (`u.Query()`), `params` set over it (each replacing every value of its
 * name), sorted as Encode writes them.
 */
export function goQueryWith(query: string, params: Record<string, string>): GoQueryPair[] {
  const set = Object.entries(params);
  const ours = set.map(([name, value]) => ({ name: goQueryEscape(name), value: goQueryEscape(value), order: name }));
  const kept = goQueryPairs(query).filter((pair) => !Object.hasOwn(params, pair.order));
  return [...kept, ...ours].sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
}

/** Values.Encode of pairs goQueryWith gave. */
export const goEncode = (pairs: GoQueryPair[]): string => pairs.map((pair) => `${pair.name}=${pair.value}`).join('&');

/** `u` with its query read as url.Values, `params` set over it, and written again by Encode. */
export const goWithQuery = (u: GoUrl, params: Record<string, string>): GoUrl => ({ ...u, query: goEncode(goQueryWith(u.query, params)) });

/** Values.Encode of fresh values. */
export const goValuesEncode = (params: Record<string, string>): string => goEncode(goQueryWith('', params));

/** The first value of `name` among pairs, escaped as Encode writes it ('' when none: Values.Get). */
export const goQueryGet = (pairs: GoQueryPair[], name: string): string => pairs.find((pair) => pair.order === name)?.value ?? '';

/** A raw query as url.Values reads it (go-query.ts drops the pairs Go's parser refuses), each side escaped again as Encode writes it. */
function goQueryPairs(query: string): GoQueryPair[] {
  return goQuerySplit(query).pairs.map(([raw, value]) => {
    const name = reescaped(raw, QUERY_KEPT, true);
    return { name, value: reescaped(value, QUERY_KEPT, true), order: escapedBytes(name) };
  });
}

/** Escaped text's bytes, one character each (0-255), so that `<` compares them in Go's byte order. */
const escapedBytes = (escaped: string): string =>
  escaped.replace(/\+/g, ' ').replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** One byte as Go's escape writes it: as is when `kept` matches it, else an upper-case %XX. */
const escapedByte =
  (kept: RegExp) =>
  (b: number): string => {
    const c = String.fromCharCode(b);
    return b < 0x80 && kept.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  };

/**
 * Escaped text unescaped and escaped again as Go does, byte by byte (an escape of a byte that is no UTF-8
 * character stays one): bytes `kept` matches as they are, every other as an upper-case %XX; in a query a
 * space (written `+`, `%20` or as is) becomes `+`.
 */
function reescaped(raw: string, kept: RegExp, query = false): string {
  const asIs = escapedByte(kept);
  const byte = (b: number): string => (query && b === 0x20 ? '+' : asIs(b));
  return raw.replace(/%([0-9A-Fa-f]{2})|[^]/gu, (m: string, hex: string | undefined) => {
    if (hex) return byte(parseInt(hex, 16));
    if (query && m === '+') return '+';
    return [...Buffer.from(m)].map(byte).join('');
  });
}
