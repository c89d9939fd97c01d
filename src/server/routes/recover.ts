// POST /recover (docs/api.md#post-recover): a recovery mail for the address. An unknown address answers the same
// 200 {} after the same lookup and the same send bookkeeping, so the endpoint cannot list accounts.
import { apiError } from '../errors.js';
import { findUserByEmail } from '../../db/users.js';
import { normaliseEmail } from '../users/addresses.js';
import { PKCE_FIELDS, readPkceParams } from '../verify/pkce-challenge.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { requestAudience } from '../auth/bearer.js';
import { redirectTarget } from '../http/redirect-target.js';
import { pretendLinkMail, sendLinkMail } from '../passwordless/link-mail.js';
import type { Handler } from '../http/types.js';

const FIELDS = { email: 'string', ...PKCE_FIELDS } as const;
export const recoverBody = bodySchema(FIELDS);

export const recover: Handler<BodyOf<typeof FIELDS>> = async (req, ctx) => {
  const timing = { kind: 'recover', startedAt: performance.now() };
  // The original guards the route itself, before reading the body, with a 400 (not 422 as /magiclink).
  if (!ctx.config.external.emailEnabled) throw apiError('email_logins_disabled');
  const body = req.body();
  const rawEmail = body.email ?? '';
  if (!rawEmail) throw apiError('recover_email_required');
  const email = normaliseEmail(rawEmail);
  const pkce = readPkceParams(body);
  const user = await findUserByEmail(ctx.db, email, requestAudience(req, ctx));
  const sent = user && (await sendLinkMail(ctx, req, user.id, { kind: 'recovery', redirectTo: redirectTarget(req, ctx), pkce }, timing));
  // No account, or one deleted since the lookup (before its row was locked): the same pretended send either way,
  // its permit taken and its time remembered, so a repeat gets the same 429. On the pool, the transaction over.
  if (!sent) await pretendLinkMail(ctx, email, timing, req.signal);
  return { body: {} };
};
