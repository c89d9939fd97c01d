// Who an external profile signs in as (REFERENCE §9.4, docs/oauth.md#linking), decided and written in one
// short transaction after every outbound call is done:
//   the (provider, subject) identity exists      → that user (identity data and user_metadata refreshed)
//   a flow started by a signed-in user (linking) → the identity is added to that user
//   a verified provider email matches one user   → the identity is linked to that user, if that user is in
//                                                  the provider's linking domain (oauth/linking-domains.ts)
//   otherwise                                    → a new user (unless DISABLE_SIGNUP)
// Only addresses the provider verified link accounts (all of them with MAILER_AUTOCONFIRM). A user whose
// email is still unconfirmed loses its password, phone and unverified identities before the provider's
// verified address confirms it: whoever pre-registered someone else's address keeps no way in. One whose
// address the provider did not verify is kept unconfirmed and marked for the confirmation mail
// (oauth/unverified.ts).
import type pg from 'pg';
import { apiError } from '../errors.js';
import { findUserByEmail, lockUserById, updateUser, type UserRow } from '../../db/users.js';
import { findVerifiedIdentitiesByEmails, lockIdentity, refreshIdentity } from '../../db/identities.js';
import { isBanned } from '../users/user-json.js';
import type { ExternalProfile } from '../providers/types.js';
import { storableProfile, UnstorableProfile } from '../providers/storable.js';
import type { AppContext } from '../context.js';
import { DEFAULT_LINKING_DOMAIN, linkingDomainOf, multipleAccountsIn } from './linking-domains.js';
import { acceptInvite, confirmThroughProvider } from './account-confirmation.js';
import { withProvidersOfIdentities } from '../users/providers-of-identities.js';
import { addIdentity, linkToSignedInUser } from './identity-link.js';
import { createAccount } from './new-account.js';
import { candidateEmail, namedEmail, type Linked, type LinkRequest } from './link-request.js';

export async function signInExternal(ctx: AppContext, c: pg.PoolClient, request: LinkRequest): Promise<Linked> {
  const r: LinkRequest = { ...request, profile: withPrimaryEmail(storable(ctx, request.provider, request.profile)) };
  const { provider, profile } = r;
  const autoconfirm = ctx.config.mailer.autoconfirm;
  const trusted = profile.emails.filter((e) => e.verified || autoconfirm).map((e) => e.email.toLowerCase());
  // Held to the end of the transaction even while there is no identity yet: a concurrent first sign-in of the
  // same person waits here, then signs in the user this one creates, as a sequential repeat would.
  const existing = await lockIdentity(c, provider, profile.subject);

  let user: UserRow;
  let created = false;
  // A signed-in user's link comes before an invite_token sent along with it, as the original decides.
  if (r.linkingTargetId) {
    if (existing) throw apiError(existing.user_id === r.linkingTargetId ? 'identity_already_exists' : 'identity_linked_to_another_user');
    const target = await lockUserById(c, r.linkingTargetId);
    if (!target) throw apiError('admin_user_not_found');
    return linkToSignedInUser(ctx, c, await addIdentity(c, target, r), r);
  } else if (r.inviteToken) {
    if (existing) throw apiError('identity_already_exists');
    user = await acceptInvite(c, r.hookRequest, provider, profile, r.inviteToken);
    const { confirmedNow: _, ...accepted } = await confirmed(c, r, user, trusted);
    return { ...accepted, audit: null };
  } else if (existing) {
    await refreshIdentity(c, existing.id, profile.claims);
    const owner = await lockUserById(c, existing.user_id);
    if (!owner) throw apiError('admin_user_not_found');
    user = await updateUser(c, owner.id, {
      raw_user_meta_data: { ...owner.raw_user_meta_data, ...profile.claims },
      raw_app_meta_data: await withProvidersOfIdentities(c, owner.id, owner.raw_app_meta_data),
    });
  } else {
    const domain = linkingDomainOf(provider, ctx.config.experimental.providerLinkingDomains);
    const match = trusted.length > 0 ? await accountWithEmail(ctx, c, trusted, r.aud, domain) : null;
    if (match) {
      // Linked by its verified address: the account takes the provider's claims into user_metadata, as it
      // does at every later sign-in with the identity (the original's LinkAccount).
      user = await addIdentity(c, match, r, { mergeClaims: true });
    } else {
      user = await createAccount(ctx, c, r, domain);
      created = true;
    }
  }

  const { confirmedNow, ...result } = await confirmed(c, r, user, trusted);
  if (result.needsConfirmation) return { ...result, audit: null };
  // A new account is confirmed by the provider's address when it has one; without one (EMAIL_OPTIONAL, or
  // its address held by another account) the original counts a verified primary address all the same.
  const candidate = candidateEmail(profile);
  const signedUp = created
    ? !!user.email || (!r.emailOptional && !!candidate && (candidate.verified || ctx.config.mailer.autoconfirm))
    : confirmedNow;
  return { ...result, audit: signedUp ? 'user_signedup' : 'login' };
}

/** A banned user is refused; an unconfirmed one is confirmed by a trusted address equal to its own, else marked for the mail. */
async function confirmed(
  c: pg.PoolClient,
  r: LinkRequest,
  user: UserRow,
  trusted: string[],
): Promise<Omit<Linked, 'audit'> & { confirmedNow: boolean }> {
  if (isBanned(user)) throw apiError('user_banned');
  const base = { needsConfirmation: false, linked: false, confirmedNow: false };
  if (!user.email) {
    // An account left without an address (the provider's is another account's) and confirmed by nothing
    // else waits, as the original's does, for the provider to verify that address: there is no mail to send.
    // Reported addresses none of which is marked primary leave nothing the provider verified for this account.
    const candidate = candidateEmail(r.profile);
    const unconfirmed = !user.email_confirmed_at && !user.phone_confirmed_at;
    const unverified = r.profile.emails.length > 0 && !(candidate && trusted.includes(candidate.email.toLowerCase()));
    return { ...base, user, needsConfirmation: unconfirmed && unverified && !r.emailOptional };
  }
  if (user.email_confirmed_at) return { ...base, user };
  if (!trusted.includes(user.email.toLowerCase())) return { ...base, user, needsConfirmation: true };
  return { ...base, user: await confirmThroughProvider(c, user, r.provider, r.profile.claims), confirmedNow: true };
}

/**
 * The profile as PostgreSQL can hold it (providers/storable.ts), made here because every sign-in with a
 * provider comes this way. One whose subject or address holds a NUL is refused as an unreadable profile.
 */
function storable(ctx: AppContext, provider: string, profile: ExternalProfile): ExternalProfile {
  try {
    return storableProfile(profile);
  } catch (err) {
    if (!(err instanceof UnstorableProfile)) throw err;
    ctx.log.warn({ provider, cause: err.message }, 'Provider profile refused');
    throw apiError('oauth_profile_failed');
  }
}

/**
 * identity_data names the address the account goes by, as the original fills it in for every provider:
 * the primary address (else the last one reported) and whether the provider verified it. Without it an
 * identity of a provider whose module reports addresses apart from its claims (discord, gitlab, …) would
 * have no `email`, and a later sign-in could not find the account through it. Both flags are always there,
 * as the original writes them (false without an address, and phone_verified false unless a token said so).
 */
function withPrimaryEmail(profile: ExternalProfile): ExternalProfile {
  const chosen = namedEmail(profile);
  const flags = { email_verified: profile.addressless === true, phone_verified: profile.claims.phone_verified === true };
  if (!chosen) return { ...profile, claims: { ...profile.claims, ...flags } };
  // Lower case, as the original stores an identity's email (and so the user_metadata it fills).
  return { ...profile, claims: { ...profile.claims, ...flags, email: chosen.email.toLowerCase(), email_verified: chosen.verified } };
}

/**
 * The one user who holds one of these addresses within `domain`: through an identity of a provider in that
 * domain, or, in the default domain only, as the account's own email (where email and phone sign-ins are;
 * accounts made in another domain carry is_sso_user, which findUserByEmail leaves out).
 */
async function accountWithEmail(ctx: AppContext, c: pg.PoolClient, emails: string[], aud: string, domain: string): Promise<UserRow | null> {
  const domains = ctx.config.experimental.providerLinkingDomains;
  const inDomain = (await findVerifiedIdentitiesByEmails(c, emails)).filter((i) => linkingDomainOf(i.provider, domains) === domain);
  const ids = new Set(inDomain.map((i) => i.user_id));
  if (domain === DEFAULT_LINKING_DOMAIN) {
    for (const email of emails) {
      const byEmail = await findUserByEmail(c, email, aud);
      if (byEmail) ids.add(byEmail.id);
    }
  }
  if (ids.size > 1) throw multipleAccountsIn(domain);
  const [id] = ids;
  return id ? lockUserById(c, id) : null;
}
