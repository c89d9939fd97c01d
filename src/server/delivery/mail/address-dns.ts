// The DNS part of MAILER_EMAIL_VALIDATION_EXTENDED (docs/one-time-codes-and-mail.md#address-validation): a
// domain takes mail when it has MX records, or, lacking them, any address (RFC 5321 §5.1 then treats the
// host itself as the mail server). Only a definite "no such records" refuses; a timeout, a failing or
// unreachable name server lets the address through, so a DNS outage never stops sign-ups.
import { Resolver } from 'node:dns/promises';
import { KNOWN_MAIL_DOMAINS, type AddressFault } from './address-rules.js';

/** c-ares' answers that mean the name or the record type certainly does not exist. */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA']);

export interface DomainLookup {
  /** null when the domain may take mail, else why not */
  verdict(domain: string, signal: AbortSignal): Promise<AddressFault | null>;
}

/** A host name as the blocked list and the answers are compared: lower case, without a root dot. */
const hostKey = (host: string) => host.toLowerCase().replace(/\.$/, '');

/**
 * `blockedHosts` are MX host names (and addresses, for domains without MX), written in any case, with or
 * without the root dot. `timeoutMs` bounds each query; the caller's signal bounds the whole look-up.
 */
export function domainLookup(nameservers: string[], blockedHosts: string[], timeoutMs: number): DomainLookup {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  if (nameservers.length > 0) resolver.setServers(nameservers);
  const blocked = new Set(blockedHosts.map(hostKey));
  const isBlocked = (host: string) => blocked.has(hostKey(host));

  return {
    async verdict(domain, signal) {
      // A single label (`user@intranet`) is no mail domain on the internet.
      if (!domain.includes('.')) return 'dns';
      if (KNOWN_MAIL_DOMAINS.has(domain)) return null;
      // The root dot makes the name absolute: the system's search domains are never appended.
      const fqdn = `${domain}.`;
      const exchanges = await lookup(() => resolver.resolveMx(fqdn), signal);
      if (exchanges !== NONE) return exchanges.some((mx) => isBlocked(mx.exchange)) ? 'mx' : null;
      const [v4, v6] = await Promise.all([lookup(() => resolver.resolve4(fqdn), signal), lookup(() => resolver.resolve6(fqdn), signal)]);
      if (v4 === NONE && v6 === NONE) return 'dns';
      const addresses = [...(v4 === NONE ? [] : v4), ...(v6 === NONE ? [] : v6)];
      return addresses.some(isBlocked) ? 'mx' : null;
    },
  };
}

const NONE = Symbol('no such records');

/**
 * The records, NONE when the server says there are none, or an empty list when it could not tell (a
 * timeout, a server failure, the caller giving up): undecided counts as "may take mail".
 */
async function lookup<T>(query: () => Promise<T[]>, signal: AbortSignal): Promise<T[] | typeof NONE> {
  if (signal.aborted) return [];
  const aborted = new Promise<T[]>((resolve) => signal.addEventListener('abort', () => resolve([]), { once: true }));
  try {
    return await Promise.race([query(), aborted]);
  } catch (err) {
    return NOT_FOUND.has((err as NodeJS.ErrnoException).code ?? '') ? NONE : [];
  }
}
