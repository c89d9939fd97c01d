// Who a verified assertion signs in as (docs/sso-saml.md#users). Each SSO provider is a linking domain of
// its own, as in the original: its identity `sso:<provider id>` with the assertion's user ID finds the
// user; else another identity of the same provider with that email links to its user; else a new user with
// is_sso_user set, its email confirmed (the IdP vouches for it) and not unique among users: an SSO
// account never takes over, nor is taken over by, a password or OAuth account with the same address.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { apiError } from '../errors.js';
import { lockUserById, updateUser, type UserRow } from '../../db/users.js';
import { insertNewUser } from '../users/insert-new-user.js';
import { findIdentitiesByUser, findProviderIdentitiesByEmail, insertIdentity, lockIdentity, refreshIdentity } from '../../db/identities.js';
import { writeAudit, type AuditRequest } from '../../db/audit-log.js';
import { actorOf } from '../users/actor.js';
import { isBanned } from '../users/user-json.js';
import { multipleAccountsIn } from '../oauth/linking-domains.js';
import type { AppContext } from '../context.js';
import { beforeUserCreated } from '../hooks/before-user-created.js';
import { noteUserCreated } from '../hooks/after-user-created.js';
import type { HookRequest } from '../hooks/invoke.js';
import { blankUserRow } from '../users/create.js';
import { nowTimestamp } from '../micro-clock.js';

export interface SsoSignIn {
  provider: string; // sso:<provider id>
  subject: string;
  email: string;
  claims: Record<string, unknown>;
}

export async function signInSsoUser(
  ctx: AppContext,
  c: pg.PoolClient,
  req: HookRequest & AuditRequest,
  s: SsoSignIn,
): Promise<{ user: UserRow; created: boolean }> {
  // A concurrent first sign-in of the same subject waits here, then finds the user this one creates.
  const existing = await lockIdentity(c, s.provider, s.subject);
  let user: UserRow | null;
  let created = false;
  if (existing) {
    await refreshIdentity(c, existing.id, s.claims);
    user = await lockUserById(c, existing.user_id);
    if (!user) throw apiError('admin_user_not_found');
    user = await updateUser(c, user.id, {
      raw_user_meta_data: { ...user.raw_user_meta_data, ...s.claims },
      raw_app_meta_data: await withIdentityProviders(c, user),
    });
  } else {
    const owners = [...new Set((await findProviderIdentitiesByEmail(c, s.provider, s.email)).map((i) => i.user_id))];
    if (owners.length > 1) throw multipleAccountsIn(s.provider); // an SSO provider is its own linking domain
    user = owners.length === 1 ? await lockUserById(c, owners[0]) : null;
    if (user) {
      // Another subject of this IdP with the same address (e.g. a changed NameID): linked, its claims merged
      // and audited as the original links any external identity.
      const identity = await insertIdentity(c, { userId: user.id, provider: s.provider, providerId: s.subject, data: newIdentityData(s) });
      user = await updateUser(c, user.id, {
        raw_user_meta_data: { ...user.raw_user_meta_data, ...s.claims },
        raw_app_meta_data: await withIdentityProviders(c, user),
      });
      const traits = { identity_id: identity.id, provider: identity.provider, provider_id: identity.provider_id };
      await writeAudit(c, req, actorOf(user), 'identity_linked', traits, req.ip ?? '');
    } else {
      if (ctx.config.disableSignup) throw apiError('signup_disabled');
      const fields = {
        id: randomUUID(),
        aud: ctx.config.jwt.aud,
        role: ctx.config.jwt.defaultGroupName,
        email: s.email.toLowerCase(),
        email_confirmed_at: nowTimestamp(),
        is_sso_user: true,
        raw_app_meta_data: { provider: s.provider, providers: [s.provider] },
        raw_user_meta_data: { ...s.claims },
      };
      // docs/hooks.md#before-user-created: as for any sign-up, before the insert; a refusal leaves nothing.
      await beforeUserCreated(ctx, { ...blankUserRow(fields.id), ...fields, confirmed_at: fields.email_confirmed_at }, req, c);
      user = await insertNewUser(c, fields);
      if (!user) throw apiError('unexpected_failure');
      noteUserCreated(ctx, req, user);
      await insertIdentity(c, { userId: user.id, provider: s.provider, providerId: s.subject, data: newIdentityData(s) });
      created = true;
    }
  }
  if (isBanned(user)) throw apiError('user_banned');
  return { user, created };
}

/**
 * identity_data of an identity created now: the claims with the email lower-cased, as the original stores a
 * new identity's (user_metadata, and a known identity's refreshed claims, keep the IdP's letter case there too).
 */
function newIdentityData(s: SsoSignIn): Record<string, unknown> {
  return { ...s.claims, email: s.email.toLowerCase() };
}

/** app_metadata with provider and providers recomputed from the user's identities, oldest first, as the original keeps them. */
async function withIdentityProviders(c: pg.PoolClient, user: UserRow): Promise<Record<string, unknown>> {
  const providers = [...new Set((await findIdentitiesByUser(c, user.id)).map((i) => i.provider))];
  return { ...user.raw_app_meta_data, providers, ...(providers.length > 0 ? { provider: providers[0] } : {}) };
}

// The claims the original keeps at the top of identity_data; any other mapped claim goes into custom_claims.
const STANDARD = new Set([
  'iss', 'sub', 'aud', 'iat', 'exp', 'name', 'family_name', 'given_name', 'middle_name', 'nickname', 'preferred_username',
  'profile', 'picture', 'website', 'gender', 'birthdate', 'zoneinfo', 'locale', 'updated_at', 'email', 'email_verified',
  'phone', 'phone_verified', 'avatar_url', 'full_name', 'provider_id', 'user_name', 'slug',
]); // prettier-ignore

/** identity_data of an SSO identity: the issuer, subject and verified email, phone_verified, the standard mapped claims, the rest as custom_claims. */
export function ssoClaims(entityId: string, subject: string, email: string, mapped: Record<string, unknown>): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  const custom: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(mapped)) (STANDARD.has(key) ? claims : custom)[key] = value;
  // The original's claims always carry phone_verified and custom_claims (false and {} when nothing maps to them).
  const phoneVerified = typeof claims.phone_verified === 'boolean' ? claims.phone_verified : false;
  Object.assign(claims, { iss: entityId, sub: subject, email, email_verified: true, phone_verified: phoneVerified, custom_claims: custom });
  return claims;
}
