// EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES (docs/one-time-codes-and-mail.md#authorized-addresses): when the list is
// not empty, mail goes to those addresses only, as with the original (a shared SMTP relay restricted to a
// team). An address matches without its `+label` and whatever its case. A mail that would go elsewhere is
// refused with 400 email_address_not_authorized before its token is issued or anything is sent.
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';
import { goQuoted } from '../go-quoted.js';

const LABEL = /\+[^@]+@/g;

export function isAuthorizedRecipient(ctx: AppContext, address: string): boolean {
  const allowed = ctx.config.external.emailAuthorizedAddresses;
  if (allowed.length === 0) return true;
  const unlabelled = address.replace(LABEL, '@').toLowerCase();
  return allowed.some((entry) => entry.toLowerCase() === unlabelled);
}

/** Throws 400 email_address_not_authorized naming the first address mail may not go to. */
export function assertAuthorizedRecipients(ctx: AppContext, addresses: string[]): void {
  const refused = addresses.find((address) => !isAuthorizedRecipient(ctx, address));
  if (refused !== undefined) {
    throw apiError('email_address_not_authorized', `Email address ${goQuoted(refused)} cannot be used as it is not authorized`);
  }
}
