// URI_ALLOW_LIST entries, parsed once into scheme, host, port and path, each matched on its own against a
// target that the WHATWG parser has already taken apart (docs/redirects.md). Matching a glob over the raw
// string let `*` swallow `?`, `\` and `@`, so `https://evil.example?.allowed.test/` passed as a subdomain.
import { domainToASCII } from 'node:url';
import picomatch from 'picomatch';

export type UrlMatcher = (url: URL) => boolean;

// scheme://[userinfo@]host[:port][path][?query][#fragment]; the host may be a bracketed IPv6 literal.
const PATTERN = /^([A-Za-z*][A-Za-z0-9+.\-*]*):\/\/(?:[^/?#@]*@)?(\[[^\]]*\]|[^/:?#]*)(?::([^/?#]*))?([^?#]*)/;
const DEFAULT_PORTS: Record<string, string> = { http: '80', https: '443', ws: '80', wss: '443', ftp: '21' };
const NEVER: UrlMatcher = () => false;

/**
 * One allow-list entry as a matcher. Globs work per part: `*` in the host stays within one label and `**`
 * spans labels; in the path `*` stays within one segment and `**` spans segments. An entry whose authority
 * ends in `**` and has no path (`myapp://**`, `https://*.example.com**`, `http://localhost:**`) is open
 * after that point: the original's glob let that `**` run on over `:port/path`, so app deep links such as
 * `com.example.app://sign-in/v2` match. The host is still judged on the parsed hostname alone. The query
 * and fragment of an entry are ignored: they cannot change where a browser goes. An entry that is not of
 * the form `scheme://host...` matches nothing.
 */
export function compileAllowPattern(entry: string): UrlMatcher {
  const parts = PATTERN.exec(entry.trim());
  if (!parts) return NEVER;
  const [, schemeGlob, hostGlob, portGlob, pathGlob] = parts;
  const scheme = schemeGlob.toLowerCase();
  const matchScheme = picomatch(scheme);
  const openEnded = pathGlob === '' && (portGlob ?? hostGlob).endsWith('**');
  const matchHost = hostMatcher((openEnded && portGlob === undefined ? hostBefore(hostGlob) : hostGlob).toLowerCase());
  const matchPort = openEnded && portGlob === undefined ? ANY : portMatcher(portGlob ?? '', scheme);
  const matchPath = openEnded ? ANY : pathGlob === '' ? (p: string) => p === '' || p === '/' : picomatch(pathGlob, { dot: true });
  return (url) =>
    hasAuthority(url) &&
    matchScheme(url.protocol.slice(0, -1)) &&
    matchHost(url.hostname) &&
    matchPort(url.port) &&
    matchPath(url.pathname);
}

const ANY = () => true;

/**
 * The host of an entry whose host runs on into `**` (`https://*.example.com**`): that `**` stands for the
 * port and path, so it is no part of the last label. Read as a glob in the label, `com**` would take any
 * label starting with `com`, and `login.example.company` would pass for a subdomain. A `**` of its own
 * (`**`, `app.**`) stays, as it names labels.
 */
function hostBefore(hostGlob: string): string {
  const host = hostGlob.replace(/\*+$/, '');
  return host === '' || host.endsWith('.') ? hostGlob : host;
}

// `**` alone also matches the empty host of an app link such as `com.myapp://` (the original's test case).
function hostMatcher(glob: string): (hostname: string) => boolean {
  const matches = picomatch(labelsAsSegments(asciiHost(glob)), { dot: true });
  return glob === '**' ? ANY : (hostname) => matches(labelsAsSegments(hostname));
}

// An entry without a port names the scheme's default one (which the parser leaves out of the target).
function portMatcher(glob: string, scheme: string): (port: string) => boolean {
  const port = glob === DEFAULT_PORTS[scheme] ? '' : glob;
  return port.includes('*') ? picomatch(port) : (p) => p === port;
}

// Every entry is written `scheme://…`: a target without the `//` (`myapp:/x`, `myapp:x`) is another form of
// URL that no entry names, as it never matched the original's glob either.
const hasAuthority = (url: URL) => url.host !== '' || url.href.startsWith(`${url.protocol}//`);

// Host labels become path segments, so picomatch's `*` (one segment) and `**` (any) apply per label.
const labelsAsSegments = (host: string) => host.split('.').join('/');

// Internationalised labels compare in their ASCII (punycode) form, as the WHATWG parser stores hostnames. A
// host without globs is converted whole, so an address (`127.0.0.1`) stays one; label by label, a number
// would be read as an IPv4 address of its own (`127` → `0.0.0.127`), so numeric labels stay as written.
function asciiHost(host: string): string {
  if (!host.includes('*')) return domainToASCII(host) || host;
  return host
    .split('.')
    .map((label) => (label.includes('*') || label === '' || /^[0-9]+$/.test(label) ? label : domainToASCII(label) || label))
    .join('.');
}
