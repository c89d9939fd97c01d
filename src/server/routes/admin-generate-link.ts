// POST /admin/generate_link (docs/api.md#post-admingenerate_link): the link a mail would carry, returned instead of sent (no
// mail, no frequency limit), with the user's fields flattened at the top level. Following action_link
// (GET /verify) works exactly as the mailed link would.
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { findUserByEmail, lockLiveUserAt, MOVED } from '../../db/users.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { findFactorsByUser } from '../../db/mfa-factors.js';
import { normaliseEmail } from '../users/addresses.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { userJson } from '../users/user-json.js';
import { assertStrongPassword, isPasswordTooLong } from '../users/password-policy.js';
import { issueOneTimeToken, linkKeyFor } from '../verify/one-time-codes.js';
import { buildConfirmationUrl, linkPathFor } from '../delivery/mail/mailer.js';
import { mailLinkBase } from '../delivery/mail/link-base.js';
import { redirectTarget } from '../http/redirect-target.js';
import { adminAudience, type Admin } from '../auth/admin.js';
import { auditLink, LINK_PLANS } from '../admin/link-plans.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';

// email is read as sent: anything but a non-empty string is the original's "An email address is required".
const FIELDS = {
  type: 'string',
  email: 'unknown',
  redirect_to: 'string',
  password: 'string',
  new_email: 'string',
  data: 'object',
} as const;
export const generateLinkBody = bodySchema(FIELDS);

export const adminGenerateLink: GuardedHandler<Admin, BodyOf<typeof FIELDS>> = (req, ctx, admin) => generateLink(req, ctx, admin, false);

/** `again`: the user found first had been given another address before its row was locked; looked up once more. */
async function generateLink(req: ApiRequest<BodyOf<typeof FIELDS>>, ctx: AppContext, admin: Admin, again: boolean) {
  const body = req.body();
  const requested = body.type ?? '';
  const email = normaliseEmail(body.email);
  if (!LINK_PLANS.has(requested)) throw apiError('admin_link_type', `Invalid email action link type requested: ${requested}`);
  const aud = adminAudience(req, ctx);
  const redirectTo = redirectOf(req, ctx, body.redirect_to ?? '');
  const existing = await findUserByEmail(ctx.db, email, aud);
  // A magic link for an unknown address signs the user up instead, without a password (docs/api.md#post-admingenerate_link).
  const type = requested === 'magiclink' && !existing ? 'signup' : requested;
  const passwordHash = requested === 'signup' && !existing ? await signupPasswordHash(ctx, body.password ?? '', req) : null;
  const input = { email, newEmail: body.new_email ?? '', data: body.data ?? {}, aud, passwordHash, req };
  const response = await tx(
    ctx.db,
    async (c) => {
      // Locked and re-read: a concurrent DELETE may have removed (or soft-deleted) the user since the lookup above.
      const user = existing && (await lockLiveUserAt(c, existing.id, email));
      if (existing && !user) throw apiError('admin_email_not_found');
      // Given another address by a concurrent request (an admin's update, a confirmed change) since the lookup:
      // a link for this address must not reach the account that left it. Answered as a request sent after
      // that change is, from a new lookup: for a magic link or an invite the address is free to sign up.
      if (user === MOVED) return MOVED;
      const plan = await LINK_PLANS.get(type)!(ctx, c, user, input);
      const issued = await issueOneTimeToken(c, {
        userId: plan.user.id,
        type: plan.tokenType,
        address: plan.address,
        length: ctx.config.mailer.otpLength,
        linkKey: linkKeyFor(ctx.config.jwt),
      });
      await auditLink(c, req, admin.actor, plan);
      const actionLink = buildConfirmationUrl({
        externalUrl: mailLinkBase(ctx.config, req),
        path: linkPathFor(ctx.config.mailer.urlPaths, plan.kind),
        tokenHash: issued.linkToken,
        type: plan.kind,
        redirectTo,
      });
      return {
        // With its factors, as the original loads the user whole.
        ...userJson(plan.user, await findIdentitiesByUser(c, plan.user.id), await findFactorsByUser(c, plan.user.id)),
        action_link: actionLink,
        email_otp: issued.otp,
        hashed_token: issued.linkToken,
        verification_type: type,
        redirect_to: redirectTo,
      };
    },
    req.signal,
  );
  if (response === MOVED) {
    if (again) throw apiError('admin_email_not_found');
    return generateLink(req, ctx, admin, true);
  }
  return { body: response };
}

// The body's redirect_to when it passes the check (normalised), else the request's (header or query),
// else SITE_URL.
function redirectOf(req: ApiRequest, ctx: AppContext, fromBody: string): string {
  return ctx.redirect(fromBody) ?? redirectTarget(req, ctx);
}

// A signup link for a new user needs a password, checked as POST /signup checks it.
async function signupPasswordHash(ctx: AppContext, password: string, req: ApiRequest): Promise<string> {
  if (!password) throw apiError('password_required');
  if (isPasswordTooLong(password)) throw apiError('password_too_long');
  await assertStrongPassword(ctx, password, req.requestId);
  return ctx.hasher.hash(password, req.signal);
}
