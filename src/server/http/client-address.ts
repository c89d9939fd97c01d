// The client's address as the service reports it: in audit entries, hooks' `ip_address`, sessions, MFA
// challenges, the captcha check and the request log (docs/api.md#the-clients-address). Behind a proxy
// the connection's address is the proxy's, so the original reads the proxy's headers first:
// Sb-Forwarded-For's leftmost address when SECURITY_SB_FORWARDED_FOR_ENABLED is on, else the first value
// of X-Forwarded-For that is an IP address, else the connection's. Per-client limits have their own key
// (limits/per-client.ts), Sb-Forwarded-For's written as here.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * An address in the form Go's net.IP.String() writes it (the original's), or undefined when `text` is
 * none: dotted-quad IPv4 (an IPv4-mapped IPv6 address included), RFC 5952 IPv6, no zone, no port.
 */
export function canonicalAddress(text: string): string | undefined {
  if (isIP(text) === 0 || text.includes('%')) return undefined;
  return text.includes(':') ? shortIPv6(text) : text;
}

/**
 * An IPv6 address as Go writes it: IPv4-mapped as dotted IPv4 (ipaddr.js's process), any other in RFC 5952
 * form. One with an embedded IPv4 (`::1.2.3.4`) passes through the WHATWG URL parser first, which writes
 * it in hex: ipaddr.js would read `::1.2.3.4` as IPv4-mapped, where Go keeps it IPv6. Only then, so the
 * connection's address of every request is not parsed twice.
 */
function shortIPv6(text: string): string | undefined {
  let hex = text;
  if (text.includes('.')) {
    const url = `http://[${text}]/`;
    if (!URL.canParse(url)) return undefined;
    hex = new URL(url).hostname.slice(1, -1);
  }
  return ipaddr.process(hex).toString();
}

/** The connection's address as uWS writes it (IPv6 in full: 0000:…:0001), shortened where it is one. */
export function connectionAddress(text: string): string {
  return text.includes(':') ? (canonicalAddress(text) ?? text) : text;
}

export function clientAddress(headers: Readonly<Record<string, string>>, connection: string, sbForwardedFor: boolean): string {
  if (sbForwardedFor) {
    const leftmost = headers['sb-forwarded-for']?.split(',', 1)[0].trim();
    const address = leftmost && canonicalAddress(leftmost);
    if (address) return address;
  }
  const forwarded = headers['x-forwarded-for'];
  if (forwarded) {
    for (const value of forwarded.split(',')) {
      const address = canonicalAddress(value.trim());
      if (address) return address;
    }
  }
  return connection;
}
