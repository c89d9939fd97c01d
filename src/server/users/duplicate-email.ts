// Who already holds an email (docs/users-and-audit.md#duplicate-addresses), for POST /signup and PUT /user:
// as in the original, an address counts as taken when it is the email of another user's identity in the
// default linking domain (a GitHub account's address, say), not only when it is a users.email. An SSO
// identity, or one of a provider given a domain of its own, does not make it taken.
import { apiError } from '../errors.js';
import { findUserByEmail, findUsersByIdentityEmail, type UserRow } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';
import { DEFAULT_LINKING_DOMAIN, linkingDomainOf } from '../oauth/linking-domains.js';
import type { AppContext } from '../context.js';

/**
 * The user of the audience (other than `self`) holding `email` through an identity, else the user whose
 * own address it is; null when it is free.
 */
export async function findEmailHolder(
  ctx: AppContext,
  q: Queryable,
  email: string,
  aud: string,
  self: UserRow | null,
): Promise<UserRow | null> {
  const domains = ctx.config.experimental.providerLinkingDomains;
  const viaIdentity = await findUsersByIdentityEmail(q, email, aud, self?.id ?? null);
  const holder = viaIdentity.find((h) => linkingDomainOf(h.provider, domains) === DEFAULT_LINKING_DOMAIN);
  if (holder) return holder.user;
  return findUserByEmail(q, email, aud);
}

/** PUT /user: 422 email_exists when another user holds the new address (above). */
export async function assertEmailFreeFor(ctx: AppContext, q: Queryable, user: UserRow, email: string): Promise<void> {
  const holder = await findEmailHolder(ctx, q, email, user.aud, user);
  if (holder && holder.id !== user.id) throw apiError('email_exists');
}
