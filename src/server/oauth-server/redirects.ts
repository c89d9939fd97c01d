// The redirects back to a client's redirect URI, byte for byte as the original builds them (its
// buildSuccessRedirectURL and buildErrorRedirectURL): the URI as its URL parser reads and writes it back
// (go-url.ts), the URI's own query read as url.Values reads it (a pair holding `;` or a malformed escape
// dropped), ours set over it (replacing every value of the name), and the whole query written by
// url.Values.Encode: sorted by name in byte order, a name's values in their order, each side escaped by
// url.QueryEscape (`~` kept; `*`, `!`, `'`, `(` and `)` escaped; a space as `+`). Only a registered
// redirect URI ever gets here.
import { goQueryEscape } from '../delivery/mail/links.js';
import { escapedBytes, goQueryReescaped, goUrlParts } from './go-url.js';

/** A query pair: its two sides escaped, and the name's bytes to sort by. */
interface Pair {
  name: string;
  value: string;
  order: string;
}

export function withQuery(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const { base, query } = goUrlParts(redirectUri);
  const set = Object.entries(params).filter((entry): entry is [string, string] => !!entry[1]);
  const ours: Pair[] = set.map(([name, value]) => ({ name: goQueryEscape(name), value: goQueryEscape(value), order: name }));
  const replaced = new Set(set.map(([name]) => name));
  const kept = ownPairs(query).filter((pair) => !replaced.has(pair.order));
  const pairs = [...kept, ...ours].sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  return `${base}?${pairs.map((pair) => `${pair.name}=${pair.value}`).join('&')}`;
}

/** The redirect URI's own query as url.Values reads it, each side escaped again as Encode writes it. */
function ownPairs(query: string): Pair[] {
  const pairs: Pair[] = [];
  for (const text of query.split('&')) {
    if (text === '' || text.includes(';')) continue;
    const equals = text.indexOf('=');
    const name = goQueryReescaped(equals < 0 ? text : text.slice(0, equals));
    const value = goQueryReescaped(equals < 0 ? '' : text.slice(equals + 1));
    if (name !== null && value !== null) pairs.push({ name, value, order: escapedBytes(name) });
  }
  return pairs;
}

/** RFC 6749 §4.1.2.1: the error, its description and the client's state. */
export const errorRedirect = (redirectUri: string, error: string, description: string, state: string | null | undefined): string =>
  withQuery(redirectUri, { error, error_description: description, state });

export const found = (location: string) => ({ status: 302, headers: { Location: location } });
