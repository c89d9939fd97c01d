// The redirects back to a client's redirect URI, byte for byte as the original builds them (its
// buildSuccessRedirectURL and buildErrorRedirectURL): the URI as its URL parser reads and writes it back,
// the URI's own query read as url.Values reads it, ours set over it (replacing every value of the name), and
// the whole query written by url.Values.Encode (http/go-url.ts). A registered redirect URI has no fragment.
// Only a registered redirect URI ever gets here.
import { goEncode, goParse, goQueryWith } from '../http/go-url.js';

export function withQuery(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const { base, query } = goParse(redirectUri);
  const set = Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => !!entry[1]));
  return `${base}?${goEncode(goQueryWith(query, set))}`;
}

/** RFC 6749 §4.1.2.1: the error, its description and the client's state. */
export const errorRedirect = (redirectUri: string, error: string, description: string, state: string | null | undefined): string =>
  withQuery(redirectUri, { error, error_description: description, state });

export const found = (location: string) => ({ status: 302, headers: { Location: location } });
