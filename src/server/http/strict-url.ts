// A URL an operator gives the service to call (a SAML provider's metadata_url, a custom provider's URLs),
// parsed so that what is checked and stored is what will be fetched. The WHATWG parser silently drops tabs
// and newlines, trims surrounding spaces and control characters, and reads `\` as `/`, so the URL it gives
// back can differ from the text (`https://idp.example\evil.example/` becomes a different host's path); the
// original's Go parser refuses control characters and a `\` in the host instead. Text the WHATWG parser
// would rewrite that way is refused here, before it is parsed.

// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const REWRITTEN = /[\u0000-\u001f\u007f\\]|^ | $/;

/** The parsed URL, or null when the text is no absolute URL or holds what the parser would silently rewrite. */
export function parseStrictUrl(text: string): URL | null {
  if (REWRITTEN.test(text)) return null;
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
