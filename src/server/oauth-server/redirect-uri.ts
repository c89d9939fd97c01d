// Which redirect URIs a client may register (docs/oauth-server.md#clients), the original's rules:
// absolute with a host, no fragment, no script-like scheme, plain http only to a loopback host. At
// /oauth/authorize the requested URI must then equal a registered one exactly (no pattern matching).
const DANGEROUS = new Set(['javascript', 'data', 'file', 'vbscript', 'about', 'blob']);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why `uri` cannot be registered, or null when it can (the reason is the original's wording). */
export function redirectUriProblem(uri: string): string | null {
  if (uri === '') return 'redirect URI cannot be empty';
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must have scheme and host';
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (DANGEROUS.has(scheme)) return `scheme '${scheme}' is not allowed for security reasons`;
  if (url.host === '') return 'must have scheme and host';
  if (scheme === 'http' && !LOOPBACK.has(url.hostname)) return 'HTTP scheme only allowed for localhost';
  if (url.hash !== '' || uri.includes('#')) return 'fragment not allowed in redirect URI';
  // ours: the list is stored comma-joined (the original's format), so a comma would split one URI in two
  if (uri.includes(',')) return 'comma not allowed in redirect URI';
  return null;
}
