// Connections to operator-stored providers only ever reach public addresses (docs/custom-providers.md#urls).
// The admin API checked every URL's addresses when it was saved, but a name can resolve elsewhere later (a
// changed record, DNS rebinding), so the check is made again on the address each connection is opened to:
// the resolver every socket uses refuses the rules of address-rules.ts, and an IP literal (which skips the
// resolver) is checked before the request. CUSTOM_OAUTH_ALLOW_PRIVATE_URLS turns this off, as at saving.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import type { Agent } from 'undici';
import { refusedAddress } from './address-rules.js';
import type { RestrictedConnections } from '../providers/types.js';
import type { Config } from '../config/types.js';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, refusing when any address the name resolves to is one the rules refuse. */
function publicLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const refused = addresses.map((a) => refusedAddress(a.address)).find((reason) => reason !== null);
    if (refused) return callback(Object.assign(new Error(`${hostname}: ${refused}`), { code: 'EADDRREFUSED' }), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

/** The reason `url`'s host may not be called when it is an IP literal (names are checked as they resolve). */
function refusedLiteral(url: string | URL): string | null {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? refusedAddress(host) : null;
}

const require = createRequire(import.meta.url);
let dispatcher: Agent | undefined;

/**
 * One per thread: fetch's dispatcher and the agent of jose's key sets (node:https), pooled as their defaults.
 * undici loads with the first call to a stored provider, not when an HTTP thread starts (most deployments
 * store none); require, because fetch needs the dispatcher at once.
 */
export const publicConnections: RestrictedConnections = {
  get dispatcher() {
    dispatcher ??= new (require('undici') as typeof import('undici')).Agent({ connect: { lookup: publicLookup } });
    return dispatcher;
  },
  httpsAgent: new HttpsAgent({ keepAlive: true, lookup: publicLookup }),
  refusedLiteral,
};

/** The connections a custom provider's calls use under the configuration: unrestricted with CUSTOM_OAUTH_ALLOW_PRIVATE_URLS. */
export function customProviderConnections(config: Config): RestrictedConnections | undefined {
  return config.customOAuth.allowPrivateUrls ? undefined : publicConnections;
}
