// The captcha guard of a route (docs/captcha.md#which-requests): when SECURITY_CAPTCHA_ENABLED, the request must carry a
// token the provider accepts — top-level `captcha_token` (docs/captcha.md#the-token) or `gotrue_meta_security.captcha_token`
// (auth-js) — unless it has an admin bearer. Declared with the route in routes.ts, applied by http/dispatch.ts.
import { ApiError, apiError } from '../errors.js';
import { fieldNames, underFieldNames } from '../http/field-names.js';
import { CAPTCHA_PARAMS } from '../http/go-param-types.js';
import { assertDecodesAsGo } from '../http/go-field-types.js';
import { requireAdmin } from './admin.js';
import { verifyCaptchaToken, type CaptchaVerdict } from './captcha.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, Run } from '../http/types.js';

/** Wraps a handler with the captcha check; `exempt` names requests the original does not check. */
export function captchaChecked(handler: Run, exempt?: (req: ApiRequest) => boolean): Run {
  return async (req, ctx) => {
    if (ctx.config.security.captcha.enabled && !exempt?.(req) && !(await hasAdminBearer(req, ctx))) await checkCaptcha(req, ctx);
    return handler(req, ctx);
  };
}

/** /token: the refresh, PKCE and id_token grants are never checked (the original's isIgnoreCaptchaRoute). */
export const uncheckedGrant = (req: ApiRequest) => ['refresh_token', 'pkce', 'id_token'].includes(req.form.get('grant_type') ?? '');

async function checkCaptcha(req: ApiRequest, ctx: AppContext): Promise<void> {
  // The original's captcha check decodes the body into its own type, before the handler reads it.
  const body = req.json(CAPTCHA_PARAMS);
  assertDecodesAsGo(body, CAPTCHA_PARAMS);
  const token = tokenOf(body);
  if (!token) throw apiError('captcha_missing');
  let verdict: CaptchaVerdict;
  try {
    verdict = await verifyCaptchaToken(ctx.config.security.captcha, token, req.ip);
  } catch (err) {
    // The original's message, but a 503 with Retry-After rather than its 500: the provider failed, not
    // the request. The cause (a timeout, a refused connection, a non-JSON reply) goes to the log.
    ctx.log.error({ err, request_id: req.requestId }, 'captcha verification failed');
    throw apiError('captcha_unavailable');
  }
  if (!verdict.success) throw apiError('captcha_disallowed', `captcha protection: request disallowed (${verdict.errorCodes.join(', ')})`);
}

const TOP_LEVEL = fieldNames(['gotrue_meta_security', 'captcha_token']);
const NESTED = fieldNames(['captcha_token']);

/** The token, its members named as the original's decoder matches them (http/field-names.ts). */
function tokenOf(sent: Record<string, unknown>): string {
  const body = underFieldNames(sent, TOP_LEVEL);
  const meta = body.gotrue_meta_security;
  const nested = meta && typeof meta === 'object' ? underFieldNames(meta as Record<string, unknown>, NESTED).captcha_token : undefined;
  const token = typeof nested === 'string' && nested.trim() ? nested : body.captcha_token;
  return typeof token === 'string' ? token.trim() : '';
}

async function hasAdminBearer(req: ApiRequest, ctx: AppContext): Promise<boolean> {
  if (!req.headers.authorization) return false;
  try {
    await requireAdmin(req, ctx);
    return true;
  } catch (err) {
    if (err instanceof ApiError) return false;
    throw err;
  }
}
