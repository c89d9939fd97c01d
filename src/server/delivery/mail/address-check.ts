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

/**
 * The check, with its verdicts remembered for a minute: a request whose transaction needs one rolls back,
 * has the address checked while holding no connection (delivery/sending-tx.ts), and finds the verdict here
 * when it runs again, so no transaction waits on a name server an attacker may control.
 */
export interface AddressCheck {
  /** the remembered verdict: null when valid, undefined when the address has not been checked lately */
  known(address: string): AddressFault | null | undefined;
  /** the remembered verdict, else the address checked now (at most ADDRESS_CHECK_TIMEOUT_MS) and remembered */
  verdict(address: string): Promise<AddressFault | null>;
}

const VERDICT_TTL_MS = 60_000;
/** Past this many remembered addresses the oldest are forgotten: a flood of addresses costs bounded memory. */
const MAX_VERDICTS = 10_000;

/** The check the settings ask for, or null when they ask for none. */
export function createAddressCheck(settings: Config['mailer']['emailValidation']): AddressCheck | null {
  const serviceUrl = settings.serviceUrl;
  if (!settings.extended && !serviceUrl) return null;
  // Unreadable JSON never gets here: config/original-corrections.ts drops it at start-up.
  const headers = (settings.serviceHeaders && parseSmtpHeaders(settings.serviceHeaders)) || {};
  const blockedMx = (settings.blockedMx && parseBlockedMx(settings.blockedMx)) || [];
  const dns = settings.extended ? domainLookup(settings.nameservers, blockedMx, ADDRESS_CHECK_TIMEOUT_MS) : null;
  const verdicts = new Map<string, { fault: AddressFault | null; until: number }>();

  async function judge(address: string): Promise<AddressFault | null> {
    let domain: string | null = null;
    if (dns) {
      const verdict = staticVerdict(address);
      if ('fault' in verdict) return verdict.fault;
      domain = verdict.domain;
    }
    const signal = AbortSignal.timeout(ADDRESS_CHECK_TIMEOUT_MS);
    const [dnsFault, refusedByService] = await Promise.all([
      dns && domain ? dns.verdict(domain, signal) : null,
      serviceUrl ? serviceRefuses(serviceUrl, headers, address, signal) : false,
    ]);
    return dnsFault ?? (refusedByService ? 'address' : null);
  }

  function known(address: string): AddressFault | null | undefined {
    const remembered = verdicts.get(address);
    if (!remembered) return undefined;
    if (remembered.until > Date.now()) return remembered.fault;
    verdicts.delete(address);
    return undefined;
  }

  return {
    known,
    async verdict(address) {
      const remembered = known(address);
      if (remembered !== undefined) return remembered;
      const fault = await judge(address);
      if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value as string);
      verdicts.set(address, { fault, until: Date.now() + VERDICT_TTL_MS });
      return fault;
    },
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
