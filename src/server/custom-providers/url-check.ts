// The admin API's check of every provider URL an operator stores (docs/custom-providers.md#urls): https,
// a host name, and no address the service should never call on a caller's behalf (loopback, private,
// link-local, multicast, unspecified: the original's SSRF guard, with its messages). The host is resolved
// with a bounded wait. CUSTOM_OAUTH_ALLOW_PRIVATE_URLS lifts the https and address rules for providers on
// a private network and for tests; the URL must still parse as http(s) with a host.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { apiError } from '../errors.js';

const LOCAL_NAMES = new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0', '::']);
const DNS_TIMEOUT_MS = 5000;

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

const refuse = (msg: string) => apiError('validation_failed', msg);

export async function checkProviderUrl(text: string, allowPrivate: boolean): Promise<void> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('Invalid URL format');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw refuse('URL must use HTTPS');
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!host) throw refuse('URL must have a valid hostname');
  if (allowPrivate) return;
  if (LOCAL_NAMES.has(host) || host.endsWith('.localhost')) throw refuse('URL cannot point to localhost or loopback addresses');
  for (const address of await resolve(host)) {
    const plain = address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
    const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
    for (const [block, msg] of REFUSED) if (block.check(plain, family)) throw refuse(msg);
  }
}

async function resolve(host: string): Promise<string[]> {
  if (isIP(host)) return [host];
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), DNS_TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    return found.map((a) => a.address);
  } catch {
    throw refuse('Unable to resolve hostname');
  } finally {
    clearTimeout(timer);
  }
}
