// POST /recover (REFERENCE §2.6): a recovery mail for the address. An unknown address answers the same
// 200 {} after the same lookup and the same send bookkeeping, so the endpoint cannot list accounts.
import { ApiError, badRequest } from '../errors.js';
import { findUserByEmail } from '../../db/users.js';
import { normaliseEmail, stringField } from '../users/addresses.js';
import { readPkceParams } from '../verify/pkce-challenge.js';
import { requestAudience } from '../auth/bearer.js';
import { redirectTarget } from '../http/redirect-target.js';
import { pretendLinkMail, sendLinkMail } from '../passwordless/link-mail.js';
import type { Handler } from '../http/types.js';

export const recover: Handler = async (req, ctx) => {
  // The original guards the route itself, before reading the body, with a 400 (not 422 as /magiclink).
  if (!ctx.config.external.emailEnabled) throw new ApiError(400, 'email_provider_disabled', 'Email logins are disabled');
  const body = req.body();
  const rawEmail = stringField(body, 'email');
  if (!rawEmail) throw badRequest('Password recovery requires an email');
  const email = normaliseEmail(rawEmail);
  const pkce = readPkceParams(body);
  const user = await findUserByEmail(ctx.db, email, requestAudience(req, ctx));
  if (!user) await pretendLinkMail(ctx, email);
  else await sendLinkMail(ctx, user.id, { kind: 'recovery', redirectTo: redirectTarget(req, ctx), pkce }, req.signal);
  return { body: {} };
};
