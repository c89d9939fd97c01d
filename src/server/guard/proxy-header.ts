// The PROXY protocol v2 header (haproxy's proxy-protocol.txt, section 2.2) the guard writes first on each
// connection to an HTTP thread: uWS reads it and reports the client's address through
// getProxiedRemoteAddress, so rate limits and audit entries see the client, not the guard.
import ipaddr from 'ipaddr.js';

const SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
const VERSION_2_PROXY = 0x21;
const VERSION_2_LOCAL = 0x20;
const TCP_OVER_IPV4 = 0x11;
const TCP_OVER_IPV6 = 0x21;
const UNSPECIFIED = 0x00;

export interface Endpoints {
  remoteAddress?: string;
  remotePort?: number;
  localAddress?: string;
  localPort?: number;
}

/** The header for a client connection; LOCAL (no address) when the socket no longer knows its peer. */
export function proxyHeader(socket: Endpoints): Buffer {
  const source = parse(socket.remoteAddress);
  const destination = parse(socket.localAddress);
  if (!source || !destination || source.kind() !== destination.kind()) return local();
  const v4 = source.kind() === 'ipv4';
  const addressBytes = v4 ? 4 : 16;
  const out = Buffer.alloc(16 + addressBytes * 2 + 4);
  SIGNATURE.copy(out, 0);
  out[12] = VERSION_2_PROXY;
  out[13] = v4 ? TCP_OVER_IPV4 : TCP_OVER_IPV6;
  out.writeUInt16BE(addressBytes * 2 + 4, 14);
  out.set(source.toByteArray(), 16);
  out.set(destination.toByteArray(), 16 + addressBytes);
  out.writeUInt16BE(socket.remotePort ?? 0, 16 + addressBytes * 2);
  out.writeUInt16BE(socket.localPort ?? 0, 18 + addressBytes * 2);
  return out;
}

function local(): Buffer {
  const out = Buffer.alloc(16);
  SIGNATURE.copy(out, 0);
  out[12] = VERSION_2_LOCAL;
  out[13] = UNSPECIFIED;
  return out;
}

/** An IPv4 client on a dual-stack socket arrives as ::ffff:a.b.c.d; `process` turns it into the IPv4 it is. */
function parse(address: string | undefined): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!address || !ipaddr.isValid(address)) return null;
  return ipaddr.process(address);
}
