// The redirects back to a client's redirect URI: its own query kept, ours added, and the whole query
// sorted by name as the original's encoder writes it. Only a registered redirect URI ever gets here.
export function withQuery(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value) url.searchParams.set(name, value);
  url.searchParams.sort();
  return url.href;
}

/** RFC 6749 §4.1.2.1: the error, its description and the client's state. */
export const errorRedirect = (redirectUri: string, error: string, description: string, state: string | null | undefined): string =>
  withQuery(redirectUri, { error, error_description: description, state });

export const found = (location: string) => ({ status: 302, headers: { Location: location } });
