// A new account for an external profile that matched no user (docs/oauth.md#linking): its address when no
// other account holds it, confirmed when the provider verified it, the before-user-created hook asked first.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { apiError } from '../errors.js';
import { isEmailTaken, type UserRow } from '../../db/users.js';
import { insertNewUser } from '../users/insert-new-user.js';
import { insertIdentity } from '../../db/identities.js';
import type { AppContext } from '../context.js';
import { beforeUserCreated } from '../hooks/before-user-created.js';
import { noteUserCreated } from '../hooks/after-user-created.js';
import { blankUserRow } from '../users/create.js';
import { findEmailHolder } from '../users/duplicate-email.js';
import { DEFAULT_LINKING_DOMAIN, multipleAccountsIn } from './linking-domains.js';
import { candidateEmail, type LinkRequest } from './link-request.js';
import { nowTimestamp } from '../micro-clock.js';

export async function createAccount(ctx: AppContext, c: pg.PoolClient, r: LinkRequest, domain: string): Promise<UserRow> {
  if (ctx.config.disableSignup) throw apiError('signup_disabled');
  if (r.profile.emails.length === 0 && !r.emailOptional) throw apiError('oauth_email_missing');
  const primary = candidateEmail(r.profile);
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
    email_confirmed_at: confirmed ? nowTimestamp() : null,
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
