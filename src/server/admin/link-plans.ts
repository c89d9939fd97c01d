// What POST /admin/generate_link does for each link type before the token is issued (docs/api.md#post-admingenerate_link):
// find or create the user, refuse the cases the original refuses, stamp the *_sent_at column, and name
// the token type, the address it is bound to and the kind of link. One entry per type.
import { apiError } from '../errors.js';
import { updateUser, type UserRow } from '../../db/users.js';
import { writeAudit, type AuditAction, type AuditActor, type AuditRequest } from '../../db/audit-log.js';
import { hasOneTimeToken, type OneTimeTokenType } from '../../db/one-time-tokens.js';
import type { Queryable } from '../../db/pool.js';
import { createUserAfterHook } from '../hooks/before-user-created.js';
import type { HookRequest } from '../hooks/invoke.js';
import { normaliseEmail } from '../users/addresses.js';
import { assertEmailFreeFor } from '../users/duplicate-email.js';
import { mergeMetadata } from '../users/merge-metadata.js';
import { actorOf } from '../users/actor.js';
import type { LinkKind } from '../delivery/mail/mailer.js';
import type { AppContext } from '../context.js';
import { nowTimestamp } from '../micro-clock.js';

export interface LinkInput {
  email: string;
  newEmail: string;
  data: Record<string, unknown>;
  aud: string;
  /** the argon2 hash of the signup password, computed before the transaction */
  passwordHash: string | null;
  /** the request, for the user-created hooks */
  req: HookRequest;
}

export interface LinkPlan {
  user: UserRow;
  tokenType: OneTimeTokenType;
  address: string;
  kind: LinkKind;
  /**
   * The audit entry the original writes for this type: a recovery or magic link is the user's own request,
   * an invite the admin's; a signup or email-change link writes none (docs/users-and-audit.md#audit-log).
   */
  audit: { action: AuditAction; by: 'user' | 'admin' } | null;
}

type Planner = (ctx: AppContext, c: Queryable, user: UserRow | null, input: LinkInput) => Promise<LinkPlan>;

async function newUser(ctx: AppContext, c: Queryable, input: LinkInput, invited: boolean): Promise<UserRow> {
  // The original runs the before-user-created hook here too (docs/hooks.md#before-user-created).
  const created = await createUserAfterHook(
    ctx,
    c,
    {
      provider: 'email',
      address: input.email,
      aud: input.aud,
      role: ctx.config.jwt.defaultGroupName,
      passwordHash: input.passwordHash,
      data: input.data,
      // As the original builds these users: `data` is the user_metadata as sent, and the identity holds only its claims.
      metadataAsSent: true,
      confirmed: false,
      invitedAt: invited ? nowTimestamp() : undefined,
    },
    input.req,
  );
  if (!created) throw apiError('email_exists'); // a concurrent sign-up took the address
  return created.user;
}

const signup: Planner = async (ctx, c, user, input) => {
  if (user?.email_confirmed_at) throw apiError('email_exists');
  const target = user
    ? await updateUser(c, user.id, {
        raw_user_meta_data: mergeMetadata(user.raw_user_meta_data, input.data),
        confirmation_sent_at: nowTimestamp(),
      })
    : await updateUser(c, (await newUser(ctx, c, input, false)).id, { confirmation_sent_at: nowTimestamp() });
  return {
    user: target,
    tokenType: 'confirmation_token',
    address: input.email,
    kind: 'confirmation',
    audit: null,
  };
};

const invite: Planner = async (ctx, c, user, input) => {
  if (user?.email_confirmed_at) throw apiError('email_exists');
  const invited = user ?? (await newUser(ctx, c, input, true));
  const now = nowTimestamp();
  const target = await updateUser(c, invited.id, { invited_at: now, confirmation_sent_at: now });
  return {
    user: target,
    tokenType: 'confirmation_token',
    address: input.email,
    kind: 'invite',
    audit: { action: 'user_invited', by: 'admin' },
  };
};

const recovery =
  (kind: 'recovery' | 'magicLink'): Planner =>
  async (_ctx, c, user, input) => {
    if (!user) throw apiError('admin_email_not_found');
    const target = await updateUser(c, user.id, { recovery_sent_at: nowTimestamp() });
    return {
      user: target,
      tokenType: 'recovery_token',
      address: input.email,
      kind,
      audit: { action: 'user_recovery_requested', by: 'user' },
    };
  };

const emailChange =
  (side: 'current' | 'new'): Planner =>
  async (ctx, c, user, input) => {
    if (!user) throw apiError('admin_email_not_found');
    if (side === 'current' && !ctx.config.mailer.secureEmailChangeEnabled) {
      throw apiError('admin_link_current_email');
    }
    const newEmail = normaliseEmail(input.newEmail);
    // The user's own address counts as taken, as the original's duplicate check finds the user itself
    // there (PUT /user never gets that far: it skips an unchanged email).
    if (newEmail === user.email?.toLowerCase()) throw apiError('email_exists');
    // Taken also when it is another user's identity email, as for PUT /user (docs/users-and-audit.md#duplicate-addresses).
    await assertEmailFreeFor(ctx, c, user, newEmail);
    // Under a secure change a link generated while the other side has none outstanding counts as the second
    // half, so that following it completes the change (docs/differences.md); with both generated, the first
    // one followed is the first of two, as for PUT /user (verify/address-change.ts).
    const otherSide = side === 'current' ? 'email_change_token_new' : 'email_change_token_current';
    const alone = ctx.config.mailer.secureEmailChangeEnabled && !!user.email && !(await hasOneTimeToken(c, user.id, otherSide));
    const target = await updateUser(c, user.id, {
      email_change: newEmail,
      email_change_sent_at: nowTimestamp(),
      email_change_confirm_status: alone ? 1 : 0,
    });
    return side === 'current'
      ? { user: target, tokenType: 'email_change_token_current', address: input.email, kind: 'emailChange', audit: null }
      : { user: target, tokenType: 'email_change_token_new', address: newEmail, kind: 'emailChange', audit: null };
  };

export const LINK_PLANS = new Map<string, Planner>([
  ['signup', signup],
  ['invite', invite],
  ['magiclink', recovery('magicLink')],
  ['recovery', recovery('recovery')],
  ['email_change_current', emailChange('current')],
  ['email_change_new', emailChange('new')],
]);

/** The plan's audit entry, as the original writes it: the user's own with no traits, or the admin's naming the user. */
export async function auditLink(c: Queryable, req: AuditRequest, admin: AuditActor, plan: LinkPlan): Promise<void> {
  if (!plan.audit) return;
  if (plan.audit.by === 'user') await writeAudit(c, req, actorOf(plan.user), plan.audit.action);
  else await writeAudit(c, req, admin, plan.audit.action, { user_id: plan.user.id, user_email: plan.user.email ?? '' });
}
