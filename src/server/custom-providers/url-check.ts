// The admin API's check of every provider URL an operator stores (docs/custom-providers.md#urls): https,
// a host name, and no address the service should never call on a caller's behalf (loopback, private,
// link-local, multicast, unspecified: the original's SSRF guard, with its messages; address-rules.ts). The host is resolved
// with a bounded wait (bounded-lookup.ts). CUSTOM_OAUTH_ALLOW_PRIVATE_URLS lifts the https and address rules for providers on
// a private network and for tests; the URL must still parse as http(s) with a host.
import { isIP } from 'node:net';
import { refusedAddress } from './address-rules.js';
import { addressesWithin } from './bounded-lookup.js';
import { apiError } from '../errors.js';
import { parseStrictUrl } from '../http/strict-url.js';

const LOCAL_NAMES = new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0', '::']);

const refuse = (msg: string) => apiError('validation_failed', msg);

export async function checkProviderUrl(text: string, allowPrivate: boolean): Promise<void> {
  const url = parseStrictUrl(text);
  if (!url) throw refuse('Invalid URL format');
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw refuse('URL must use HTTPS');
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!host) throw refuse('URL must have a valid hostname');
  if (allowPrivate) return;
  if (LOCAL_NAMES.has(host) || host.endsWith('.localhost')) throw refuse('URL cannot point to localhost or loopback addresses');
  for (const address of await resolve(host)) {
    const refused = refusedAddress(address);
    if (refused) throw refuse(refused);
  }
}

async function resolve(host: string): Promise<string[]> {
  if (isIP(host)) return [host];
  const found = await addressesWithin(host);
  if (!found) throw refuse('Unable to resolve hostname');
  return found;
}
