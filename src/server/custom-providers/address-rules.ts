// The addresses the service never calls on an operator-stored provider's behalf (docs/custom-providers.md#urls):
// loopback, private, link-local, multicast, unspecified — with the original's message for each. Checked when
// a URL is saved (url-check.ts) and again for the very address every connection is made to
// (public-connections.ts), so a name that later resolves elsewhere cannot reach into the network.
import { BlockList, isIP } from 'node:net';

const ranges = (list: [string, number, 'ipv4' | 'ipv6'][]) => {
  const block = new BlockList();
  for (const [net, prefix, type] of list) block.addSubnet(net, prefix, type);
  return block;
};

const REFUSED: [BlockList, string][] = [
  [
    ranges([
      ['127.0.0.0', 8, 'ipv4'],
      ['::1', 128, 'ipv6'],
    ]),
    'URL cannot resolve to loopback addresses',
  ],
  [
    ranges([
      ['10.0.0.0', 8, 'ipv4'],
      ['172.16.0.0', 12, 'ipv4'],
      ['192.168.0.0', 16, 'ipv4'],
      ['fc00::', 7, 'ipv6'],
    ]),
    'URL cannot resolve to private network addresses',
  ],
  [
    ranges([
      ['169.254.0.0', 16, 'ipv4'],
      ['fe80::', 10, 'ipv6'],
    ]),
    'URL cannot resolve to link-local addresses',
  ],
  [
    ranges([
      ['224.0.0.0', 4, 'ipv4'],
      ['ff00::', 8, 'ipv6'],
    ]),
    'URL cannot resolve to multicast addresses',
  ],
  [
    ranges([
      ['0.0.0.0', 32, 'ipv4'],
      ['::', 128, 'ipv6'],
    ]),
    'URL cannot resolve to unspecified addresses',
  ],
];

/** Why `address` (an IP literal) may not be called, or null when it may. IPv4-mapped IPv6 counts as its IPv4. */
export function refusedAddress(address: string): string | null {
  const plain = address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
  const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
  for (const [block, msg] of REFUSED) if (block.check(plain, family)) return msg;
  return null;
}
