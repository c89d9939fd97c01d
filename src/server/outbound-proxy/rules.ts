// Which outbound calls go through an egress proxy (docs/settings.md#outbound-proxy). The original's HTTP
// client takes HTTPS_PROXY for https URLs and HTTP_PROXY for http ones, skips the proxy for localhost, any
// loopback address and whatever NO_PROXY names, and an operator's NO_PROXY was written for those rules: an
// IP, a CIDR block, a domain with its subdomains (`example.com`), its subdomains only (`.example.com` or
// `*.example.com`), each optionally with a port, or `*` for everything. They are kept here exactly, so the
// same variables route the same calls after the swap. Node's own libraries read these variables each with
// other rules (no CIDR blocks, no loopback exemption), which is why the matching is ours.
import { BlockList, isIP } from 'node:net';
import { domainToASCII } from 'node:url';

export interface ProxySettings {
  httpProxy: string;
  httpsProxy: string;
  noProxy: string;
}

/** The proxy a URL's call goes through, or null for a direct connection. */
export type ProxyFor = (url: URL) => URL | null;

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };
const SUPPORTED_SCHEMES = new Set(['http:', 'https:']);

/**
 * The proxy's URL as the original reads the variable: a URL with a scheme and a host, else the text read as
 * `http://` + text (so `proxy.internal:3128` is an HTTP proxy). A message when it is none, or when its
 * scheme is one this service cannot speak (the original also speaks SOCKS5).
 */
export function proxyAddress(text: string): URL | string {
  const withScheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]/.test(text) ? text : `http://${text}`;
  if (!URL.canParse(withScheme)) return `"${withoutUserInfo(text)}" is not a proxy address`;
  const url = new URL(withScheme);
  if (!SUPPORTED_SCHEMES.has(url.protocol))
    return `"${withoutUserInfo(text)}": only http:// and https:// proxies are supported (not ${url.protocol}//)`;
  return url;
}

/**
 * The variable's text with any user info (`user:password@`) replaced by `…@`, so that the start-up error
 * naming a bad proxy never prints its password. Done on the text, since a value that does not parse has no
 * URL to take the credentials from; the user info is whatever precedes the authority's last `@`.
 */
function withoutUserInfo(text: string): string {
  return text.replace(/^((?:[A-Za-z][A-Za-z0-9+.-]*:\/\/)?)[^/?#]*@/, '$1…@');
}

/** The rule for a deployment's settings: null when neither proxy variable is set (every call goes direct). */
export function proxyRule(settings: ProxySettings): ProxyFor | null {
  const https = settings.httpsProxy ? proxyAddress(settings.httpsProxy) : null;
  const http = settings.httpProxy ? proxyAddress(settings.httpProxy) : null;
  if (typeof https === 'string' || typeof http === 'string') throw new Error('proxy addresses are checked when the settings load');
  if (!https && !http) return null;
  const exempt = exemptions(settings.noProxy);
  return (url) => {
    const proxy = url.protocol === 'https:' ? https : url.protocol === 'http:' ? http : null;
    if (!proxy) return null;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    return goesDirect(host, url.port || DEFAULT_PORTS[url.protocol], exempt) ? null : proxy;
  };
}

type Family = 'ipv4' | 'ipv6';
/** Whether an exemption covers a target: its host (an IPv4-mapped address read as IPv4), port, and family when an IP. */
type Exemption = (host: string, port: string, family: Family | null) => boolean;

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

function familyOf(address: string): Family | null {
  const version = isIP(address);
  return version === 4 ? 'ipv4' : version === 6 ? 'ipv6' : null;
}

function goesDirect(host: string, port: string, exempt: Exemption[]): boolean {
  if (host === 'localhost') return true;
  const plain = host.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
  const family = familyOf(plain);
  if (family && LOOPBACK.check(plain, family)) return true;
  return exempt.some((matches) => matches(family ? plain : host, port, family));
}

/** NO_PROXY's entries, comma-separated, read as the original reads them (lower-cased, blanks skipped). */
function exemptions(noProxy: string): Exemption[] {
  const entries = noProxy
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter(Boolean);
  if (entries.includes('*')) return [() => true];
  return entries.flatMap((entry) => {
    const exemption = exemptionOf(entry);
    return exemption ? [exemption] : [];
  });
}

function exemptionOf(entry: string): Exemption | null {
  const { host, port } = splitPort(entry);
  if (!host) return null;
  // An address, or a CIDR block (which matches any port, as in the original).
  const cidr = /^(.+)\/(\d+)$/.exec(host);
  const address = cidr ? cidr[1] : host;
  const addressFamily = familyOf(address);
  if (addressFamily) {
    const maxBits = addressFamily === 'ipv4' ? 32 : 128;
    const bits = cidr ? Number(cidr[2]) : maxBits;
    if (bits > maxBits) return null;
    const block = new BlockList();
    block.addSubnet(address, bits, addressFamily);
    const wanted = cidr ? '' : port;
    return (target, targetPort, family) => family !== null && block.check(target, family) && portMatches(wanted, targetPort);
  }
  if (host.includes('/')) return null; // a block that is none is skipped
  // `example.com` is the name and its subdomains; `.example.com` and `*.example.com` its subdomains only.
  // Names compare as URLs hold them: an international name in its ASCII (punycode) form.
  const subdomainsOnly = /^\*?\./.test(host);
  const bare = host.replace(/^\*?\./, '');
  const name = domainToASCII(bare) || bare;
  return (target, targetPort) => (target.endsWith(`.${name}`) || (!subdomainsOnly && target === name)) && portMatches(port, targetPort);
}

const portMatches = (wanted: string, port: string) => wanted === '' || wanted === port;

/** `host:port`, `[v6]:port` or a bare host (a bare IPv6 address has colons and no port). */
function splitPort(entry: string): { host: string; port: string } {
  const bracketed = /^\[([^\]]*)\]:(\d*)$/.exec(entry);
  if (bracketed) return { host: bracketed[1], port: bracketed[2] };
  const hostPort = /^([^:]*):(\d*)$/.exec(entry);
  if (hostPort) return { host: hostPort[1], port: hostPort[2] };
  return { host: entry.replace(/^\[|\]$/g, ''), port: '' };
}
