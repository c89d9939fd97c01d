// The original's address validation before each mail (docs/one-time-codes-and-mail.md#address-validation),
// off unless MAILER_EMAIL_VALIDATION_EXTENDED or _SERVICE_URL is set. The static rules run first, so a
// placeholder address costs no network call; the DNS look-up and the outside service then run side by
// side, both within one 3 s budget, and either one's refusal refuses the mail.
import type { Config } from '../../config/types.js';
import { staticVerdict, type AddressFault } from './address-rules.js';
import { domainLookup } from './address-dns.js';
import { serviceRefuses } from './address-service.js';
import { parseSmtpHeaders } from './smtp-headers.js';

/** The original's budget for the whole check; past it, what is still unknown counts as valid. */
export const ADDRESS_CHECK_TIMEOUT_MS = 3000;

/** Thrown by Mailer.send for a recipient the check refuses; no mail was sent. */
export class MailAddressRefused extends Error {
  override readonly name = 'MailAddressRefused';
  constructor(
    readonly address: string,
    readonly fault: AddressFault,
  ) {
    super(`the address check refused the recipient (${fault})`);
  }
}

export type AddressCheck = (address: string) => Promise<void>;

/** The check the settings ask for, or null when they ask for none. */
export function createAddressCheck(settings: Config['mailer']['emailValidation']): AddressCheck | null {
  const serviceUrl = settings.serviceUrl;
  if (!settings.extended && !serviceUrl) return null;
  // Unreadable JSON never gets here: config/original-corrections.ts drops it at start-up.
  const headers = (settings.serviceHeaders && parseSmtpHeaders(settings.serviceHeaders)) || {};
  const dns = settings.extended ? domainLookup(settings.nameservers, blockedHosts(settings.blockedMx), ADDRESS_CHECK_TIMEOUT_MS) : null;

  return async (address) => {
    let domain: string | null = null;
    if (dns) {
      const verdict = staticVerdict(address);
      if ('fault' in verdict) throw new MailAddressRefused(address, verdict.fault);
      domain = verdict.domain;
    }
    const signal = AbortSignal.timeout(ADDRESS_CHECK_TIMEOUT_MS);
    const [dnsFault, refusedByService] = await Promise.all([
      dns && domain ? dns.verdict(domain, signal) : null,
      serviceUrl ? serviceRefuses(serviceUrl, headers, address, signal) : false,
    ]);
    if (dnsFault) throw new MailAddressRefused(address, dnsFault);
    if (refusedByService) throw new MailAddressRefused(address, 'address');
  };
}

/** MAILER_EMAIL_VALIDATION_BLOCKED_MX: a JSON array of host names, or null when it is not one. */
export function parseBlockedMx(text: string): string[] | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null;
}

/** The blocked hosts as the look-up compares them: lower case, without a root dot. */
const blockedHosts = (text: string): Set<string> =>
  new Set((text ? (parseBlockedMx(text) ?? []) : []).map((host) => host.toLowerCase().replace(/\.$/, '')));
