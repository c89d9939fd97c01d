// Which redirect URIs a client may register (docs/oauth-server.md#clients), the original's rules in its
// order, on the parts its parser reads (uri-parts.ts): absolute with a host, no script-like scheme, plain
// http only to a loopback host as written, no fragment. At /oauth/authorize the requested URI must then
// equal a registered one exactly (no pattern matching).
import { uriParts } from './uri-parts.js';

const DANGEROUS = new Set(['javascript', 'data', 'file', 'vbscript', 'about', 'blob']);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

/** Why `uri` cannot be registered, or null when it can (the reason is the original's wording). */
export function redirectUriProblem(uri: string): string | null {
  if (uri === '') return 'redirect URI cannot be empty';
  const parts = uriParts(uri);
  if (!parts) return 'invalid URL format';
  if (parts.scheme === '' || parts.host === '') return 'must have scheme and host';
  if (DANGEROUS.has(parts.scheme)) return `scheme '${parts.scheme}' is not allowed for security reasons`;
  if (parts.scheme === 'http' && !LOOPBACK.has(parts.hostname)) return 'HTTP scheme only allowed for localhost';
  if (parts.fragment !== '') return 'fragment not allowed in redirect URI';
  // ours: the list is stored comma-joined (the original's format), so a comma would split one URI in two
  if (uri.includes(',')) return 'comma not allowed in redirect URI';
  // ours: an address no browser can open (a port above 65535, `<` in a host name) is refused, since
  // the redirect back to it would lead nowhere (docs/differences.md)
  if (!URL.canParse(uri)) return 'invalid URL format';
  return null;
}
