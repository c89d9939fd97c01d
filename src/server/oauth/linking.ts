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
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { apiError } from '../errors.js';
import { findUserByEmail, isEmailTaken, lockUserById, updateUser, type UserRow } from '../../db/users.js';
import { insertNewUser } from '../users/insert-new-user.js';
import {
  findIdentitiesByUser,
  findVerifiedIdentitiesByEmails,
  insertIdentity,
  lockIdentity,
  refreshIdentity,
} from '../../db/identities.js';
import { writeAudit, type AuditRequest } from '../../db/audit-log.js';
import { deleteOneTimeTokens } from '../../db/one-time-tokens.js';
import { actorOf } from '../users/actor.js';
import { isBanned } from '../users/user-json.js';
import type { ExternalProfile } from '../providers/types.js';
import type { AppContext } from '../context.js';
import { beforeUserCreated } from '../hooks/before-user-created.js';
import { noteUserCreated } from '../hooks/after-user-created.js';
import type { HookRequest } from '../hooks/invoke.js';
import { blankUserRow } from '../users/create.js';
import { emailFromIdentities } from '../users/email-from-identities.js';
import { findEmailHolder } from '../users/duplicate-email.js';
import { DEFAULT_LINKING_DOMAIN, linkingDomainOf, multipleAccountsIn } from './linking-domains.js';
import { acceptInvite, confirmThroughProvider, withProvider } from './account-confirmation.js';

export interface LinkRequest {
  provider: string;
  profile: ExternalProfile;
  /** the signed-in user who started GET /user/identities/authorize */
  linkingTargetId: string | null;
  /** the invite link's token passed to /authorize: the invitee accepts the invite with this provider */
  inviteToken?: string | null;
  emailOptional: boolean;
  aud: string;
  /** the request signing in: the user-created hooks are called for it (docs/hooks.md#before-user-created), its audit entries logged with it */
  hookRequest: HookRequest & AuditRequest;
}

export interface Linked {
  user: UserRow;
  /**
   * How the sign-in is audited at the callback (or the id_token grant), as the original decides it: user_signedup
   * when the provider's address confirmed the account (a new one, or one still unconfirmed), login otherwise
   * (a new account without an address too); none while the address awaits its confirmation mail, and none for
   * a link (identity_linked) or an invite (invite_accepted), which are audited as such.
   */
  audit: 'user_signedup' | 'login' | null;
  /** the user's email is unconfirmed and the provider did not verify it: the confirmation mail is due (oauth/unverified.ts) */
  needsConfirmation: boolean;
  /** a signed-in user linked this identity: its notification is due (delivery/notifications.ts) */
  linked: boolean;
  /** with needsConfirmation: the error the sign-in ends with after the mail (oauth/unverified.ts) */
  refusal?: 'provider_email_needs_verification' | 'link_email_not_confirmed';
}

export async function signInExternal(ctx: AppContext, c: pg.PoolClient, request: LinkRequest): Promise<Linked> {
  const r: LinkRequest = { ...request, profile: withPrimaryEmail(request.profile) };
  const { provider, profile } = r;
  const autoconfirm = ctx.config.mailer.autoconfirm;
  const trusted = profile.emails.filter((e) => e.verified || autoconfirm).map((e) => e.email.toLowerCase());
  const existing = await lockIdentity(c, provider, profile.subject);

  let user: UserRow;
  let created = false;
  if (r.inviteToken) {
    if (existing) throw apiError('identity_already_exists');
    user = await acceptInvite(c, r.hookRequest, provider, profile, r.inviteToken);
    const { confirmedNow: _, ...accepted } = await confirmed(c, r, user, trusted);
    return { ...accepted, audit: null };
  } else if (r.linkingTargetId) {
    if (existing) throw apiError(existing.user_id === r.linkingTargetId ? 'identity_already_exists' : 'identity_linked_to_another_user');
    const target = await lockUserById(c, r.linkingTargetId);
    if (!target) throw apiError('admin_user_not_found');
    return linkToSignedInUser(ctx, c, await addIdentity(c, target, r), r);
  } else if (existing) {
    await refreshIdentity(c, existing.id, profile.claims);
    const owner = await lockUserById(c, existing.user_id);
    if (!owner) throw apiError('admin_user_not_found');
    user = await updateUser(c, owner.id, {
      raw_user_meta_data: { ...owner.raw_user_meta_data, ...profile.claims },
      raw_app_meta_data: withProvider(owner.raw_app_meta_data, provider),
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
  const signedUp = created
    ? !!user.email || (!r.emailOptional && !!profile.emails[0] && (profile.emails[0].verified || ctx.config.mailer.autoconfirm))
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
    const primary = r.profile.emails[0];
    const unconfirmed = !user.email_confirmed_at && !user.phone_confirmed_at;
    const unverified = !!primary && !trusted.includes(primary.email.toLowerCase());
    return { ...base, user, needsConfirmation: unconfirmed && unverified && !r.emailOptional };
  }
  if (user.email_confirmed_at) return { ...base, user };
  if (!trusted.includes(user.email.toLowerCase())) return { ...base, user, needsConfirmation: true };
  return { ...base, user: await confirmThroughProvider(c, user, r.provider, r.profile.claims), confirmedNow: true };
}

/**
 * identity_data names the address the account goes by, as the original fills it in for every provider:
 * the primary address (else the last one reported) and whether the provider verified it. Without it an
 * identity of a provider whose module reports addresses apart from its claims (discord, gitlab, …) would
 * have no `email`, and a later sign-in could not find the account through it. Both flags are always there,
 * as the original writes them (false without an address, and phone_verified false unless a token said so).
 */
function withPrimaryEmail(profile: ExternalProfile): ExternalProfile {
  const chosen = profile.emails.find((e) => e.primary) ?? profile.emails.at(-1);
  const flags = { email_verified: profile.addressless === true, phone_verified: profile.claims.phone_verified === true };
  if (!chosen) return { ...profile, claims: { ...profile.claims, ...flags } };
  // Lower case, as the original stores an identity's email (and so the user_metadata it fills).
  return { ...profile, claims: { ...profile.claims, ...flags, email: chosen.email.toLowerCase(), email_verified: chosen.verified } };
}

/**
 * The identity is added to the signed-in user. One without an email takes it from its identities as the
 * original does (users/email-from-identities.ts; 400 email_exists when every address is held): confirmed
 * when the linked provider verified its address, else mailed for confirmation and refused with 422
 * email_not_confirmed after the commit. An anonymous user becomes a permanent one unless that refusal comes.
 */
async function linkToSignedInUser(ctx: AppContext, c: pg.PoolClient, linkedTo: UserRow, r: LinkRequest): Promise<Linked> {
  let user = linkedTo;
  if (isBanned(user)) throw apiError('user_banned');
  const result = (u: UserRow, needsConfirmation = false): Linked =>
    needsConfirmation
      ? { user: u, audit: null, needsConfirmation, linked: true, refusal: 'link_email_not_confirmed' }
      : { user: u, audit: null, needsConfirmation, linked: true };
  if (user.email) return result(user);

  const patch = await emailFromIdentities(c, user, await findIdentitiesByUser(c, user.id), ctx.config.mailer.autoconfirm);
  if (!patch) throw apiError('link_email_exists');
  // The provider's claims stay in identity_data: the user's own metadata is not filled from them, as the original leaves it.
  if (!patch.email) return result(user.is_anonymous ? await updateUser(c, user.id, { ...patch, is_anonymous: false }) : user);

  user = await updateUser(c, user.id, patch);
  if (!r.profile.emails[0]?.verified) return result(user, true);
  await deleteOneTimeTokens(c, user.id);
  return result(
    await updateUser(c, user.id, {
      email_confirmed_at: new Date(),
      is_anonymous: false,
      raw_user_meta_data: { ...user.raw_user_meta_data, email_verified: true },
    }),
  );
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

async function addIdentity(c: pg.PoolClient, user: UserRow, r: LinkRequest, o: { mergeClaims?: boolean } = {}): Promise<UserRow> {
  const identity = await insertIdentity(c, {
    userId: user.id,
    provider: r.provider,
    providerId: r.profile.subject,
    data: r.profile.claims,
  });
  const traits = { identity_id: identity.id, provider: identity.provider, provider_id: identity.provider_id };
  await writeAudit(c, r.hookRequest, actorOf(user), 'identity_linked', traits, r.hookRequest.ip);
  return updateUser(c, user.id, {
    raw_app_meta_data: withProvider(user.raw_app_meta_data, r.provider),
    ...(o.mergeClaims ? { raw_user_meta_data: { ...user.raw_user_meta_data, ...r.profile.claims } } : {}),
  });
}

async function createAccount(ctx: AppContext, c: pg.PoolClient, r: LinkRequest, domain: string): Promise<UserRow> {
  if (ctx.config.disableSignup) throw apiError('signup_disabled');
  const primary = r.profile.emails[0];
  if (!primary && !r.emailOptional) throw apiError('oauth_email_missing');
  const verified = !!primary && (primary.verified || ctx.config.mailer.autoconfirm);
  // An account of another linking domain is flagged is_sso_user, as the original flags it: the flag is what
  // lets several accounts hold one address (the unique index on email leaves such rows out), and keeps the
  // account out of email and phone sign-ins, which belong to the default domain.
  const separate = domain !== DEFAULT_LINKING_DOMAIN;
  // An address another account already holds stays with it: the new account gets none (REFERENCE §9.4). Held
  // in any audience, as the unique index on email counts it: a user of another one (a sign-up with X-JWT-AUD)
  // is not found by the linking above, and the insert would fail on the index. A separate domain's account
  // keeps a verified address all the same: it is that domain's, and the index does not count it.
  // An unverified address is also dropped when another user's identity carries it, as the original's
  // IsDuplicatedEmail decides for a sign-in without a verified address (docs/users-and-audit.md#duplicate-addresses).
  const keep =
    !!primary &&
    ((separate && verified) ||
      !((await isEmailTaken(c, primary.email)) || (!verified && (await findEmailHolder(ctx, c, primary.email, r.aud, null)))));
  const email = keep ? primary.email.toLowerCase() : null;
  // A person the provider vouches for without an address is confirmed, as the original confirms them.
  const confirmed = (!!email && verified) || r.profile.addressless === true;
  const fields = {
    id: randomUUID(),
    aud: r.aud,
    role: ctx.config.jwt.defaultGroupName,
    email,
    email_confirmed_at: confirmed ? new Date() : null,
    is_sso_user: separate,
    raw_app_meta_data: { provider: r.provider, providers: [r.provider] },
    // A confirmed account's metadata says so, whatever the provider said (MAILER_AUTOCONFIRM), as the original's confirmation writes it.
    raw_user_meta_data: confirmed ? { ...r.profile.claims, email_verified: true } : { ...r.profile.claims },
  };
  // As for any sign-up, the hook sees the user before the insert, so its refusal leaves nothing.
  await beforeUserCreated(ctx, { ...blankUserRow(fields.id), ...fields, confirmed_at: fields.email_confirmed_at }, r.hookRequest, c);
  const user = await insertNewUser(c, fields);
  if (!user) throw multipleAccountsIn(domain); // a concurrent sign-up took the address between the check and the insert
  await insertIdentity(c, { userId: user.id, provider: r.provider, providerId: r.profile.subject, data: r.profile.claims });
  noteUserCreated(ctx, r.hookRequest, user);
  return user;
}
