// A host name's addresses for the address rules (address-rules.ts), from the system resolver every socket
// uses, waited for 5 s at most (docs/custom-providers.md#urls): a resolver that never answers must end in the
// original's refusal of a name that does not resolve, not hold the request until its deadline. The lookup
// itself cannot be cancelled (getaddrinfo); its late answer is dropped.
import { lookup } from 'node:dns/promises';
import { settledWithin } from '../settled-within.js';

const LOOKUP_TIMEOUT_MS = 5000;

/** Every address `host` resolves to, or null when it does not resolve, or not within the limit. */
export function addressesWithin(host: string): Promise<string[] | null> {
  const found = lookup(host, { all: true, verbatim: true }).then((addresses) => addresses.map((a) => a.address));
  return settledWithin(found, LOOKUP_TIMEOUT_MS, null);
}
