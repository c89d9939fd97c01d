// The user's email chosen among its identities, as the original does when an identity is unlinked and when a
// user without an email links one (docs/oauth.md#manual-linking):
//   the email stays if an identity still carries it; else the best identity's address (provider-verified
//   first, then unverified, then none; oldest first) that no other user holds becomes the email.
// A replaced email takes every pending token and address change with it (they were sent for the old one),
// and a promoted address that neither the provider verified nor MAILER_AUTOCONFIRM covers is unconfirmed.
// Unlinking a phone identity takes the phone instead.
import type pg from 'pg';
import { apiError } from '../errors.js';
import { isEmailTaken, type UserRow, type UserWrite } from '../../db/users.js';
import { deleteOneTimeTokens } from '../../db/one-time-tokens.js';
import type { IdentityRow } from '../../db/identities.js';
import { NO_PENDING_MAIL_OR_CHANGES } from './create.js';

/** The user's columns to write after `doomed` is unlinked; `rest` are the identities that remain. */
export async function addressesAfterUnlink(
  c: pg.PoolClient,
  user: UserRow,
  doomed: IdentityRow,
  rest: IdentityRow[],
  autoconfirm: boolean,
): Promise<UserWrite> {
  if (doomed.provider === 'phone') return { phone: null, phone_confirmed_at: null };
  const patch = await emailFromIdentities(c, user, rest, autoconfirm);
  if (!patch) throw apiError('email_conflict_identity_not_deletable');
  return patch;
}

/** The columns that give `user` the email its `identities` choose: none to write when it keeps its own, null when every candidate address is held by another user. */
export async function emailFromIdentities(
  c: pg.PoolClient,
  user: UserRow,
  identities: IdentityRow[],
  autoconfirm: boolean,
): Promise<UserWrite | null> {
  const email = user.email?.toLowerCase() ?? null;
  if (identities.some((i) => (i.email ?? null) === email)) return {};

  let promoted: IdentityRow | undefined;
  for (const candidate of [...identities].sort(byPromotionOrder)) {
    if (!candidate.email || !(await isEmailTaken(c, candidate.email, user.id))) {
      promoted = candidate;
      break;
    }
  }
  if (!promoted) return null;

  await deleteOneTimeTokens(c, user.id);
  const patch: UserWrite = { email: promoted.email, ...NO_PENDING_MAIL_OR_CHANGES };
  if (!promoted.email || (!providerVerified(promoted) && !autoconfirm)) {
    patch.email_confirmed_at = null;
    patch.raw_user_meta_data = { ...user.raw_user_meta_data, email_verified: false };
  }
  return patch;
}

/** Only a JSON true counts, as the original reads identity_data.email_verified. */
function providerVerified(identity: IdentityRow): boolean {
  return identity.identity_data.email_verified === true;
}

function rank(identity: IdentityRow): number {
  if (!identity.email) return 2;
  return providerVerified(identity) ? 0 : 1;
}

function byPromotionOrder(a: IdentityRow, b: IdentityRow): number {
  return rank(a) - rank(b) || a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}
