// The network-free part of MAILER_EMAIL_VALIDATION_EXTENDED (docs/one-time-codes-and-mail.md#address-validation):
// addresses and domains that are typed often and never receive mail, judged before any DNS look-up, with
// the original's lists so a deployment refuses the same addresses after the switch.

/** Why an address is refused; `mx` is a blocked mail server, found only by the DNS look-up (address-dns.ts). */
export type AddressFault = 'address' | 'format' | 'dns' | 'mx';

/** Whole addresses people type as placeholders. */
const PLACEHOLDER_ADDRESSES = new Set(['test@gmail.com', 'example@gmail.com', 'someone@gmail.com', 'test@email.com']);

/**
 * Domains that bounce: the reserved names of RFC 2606 typed bare, names that resolve but are not mailboxes
 * anyone owns, and two common misspellings of gmail.com.
 */
const NO_MAIL_DOMAINS = new Set([
  'test',
  'example',
  'invalid',
  'local',
  'localhost',
  'test.com',
  'example.com',
  'example.net',
  'example.org',
  'gamil.com',
  'gamai.com',
  'anonymous.com',
  'email.com',
]);

/** RFC 2606's reserved top-level names (and `.local`, mDNS): nothing under them is reachable by mail. */
const RESERVED_SUFFIXES = ['.test', '.example', '.invalid', '.local', '.localhost'];

/**
 * The largest public mail providers, whose domains certainly take mail: no DNS look-up is spent on them.
 * (The original's list spells rediffmail.com without the root dot, so there it never matches; the look-up
 * it then makes finds the provider's MX, so the verdict is the same.)
 */
export const KNOWN_MAIL_DOMAINS = new Set([
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'aol.com',
  'outlook.com',
  'comcast.net',
  'icloud.com',
  'msn.com',
  'hotmail.co.uk',
  'sbcglobal.net',
  'live.com',
  'yahoo.co.in',
  'me.com',
  'att.net',
  'mail.ru',
  'bellsouth.net',
  'rediffmail.com',
  'cox.net',
  'yahoo.co.uk',
  'verizon.net',
]);

/** Gmail does not hand out user names shorter than this; shorter ones are mistyped. */
const GMAIL_MIN_NAME_LENGTH = 6;

/** The address's domain when the static rules let it through, else why not. */
export function staticVerdict(address: string): { domain: string } | { fault: AddressFault } {
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return { fault: 'format' };
  // The address pattern every request checks lets dots fall anywhere in the name; an RFC 5322 dot-atom,
  // which the original's extended check parses the address as, has them only between other characters.
  const name = address.slice(0, at);
  if (name.startsWith('.') || name.endsWith('.') || name.includes('..')) return { fault: 'format' };
  if (PLACEHOLDER_ADDRESSES.has(address)) return { fault: 'address' };
  const domain = address.slice(at + 1);
  if (NO_MAIL_DOMAINS.has(domain) || RESERVED_SUFFIXES.some((suffix) => domain.endsWith(suffix))) return { fault: 'dns' };
  if (domain === 'gmail.com' && name.length < GMAIL_MIN_NAME_LENGTH) return { fault: 'address' };
  return { domain };
}
