// POST /token?grant_type=...: picks the grant module by the form's grant_type (the query's, or a urlencoded
// body's: http/logger-form.ts) and checks its body schema.
// Each grant's outcome is counted here, in one place (observability/metrics.ts; free when metrics are off).
import { ApiError, apiError } from '../errors.js';
import { GRANTS } from '../grants/index.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, ApiResponse, Handler } from '../http/types.js';
import type { ClientBucket } from '../auth/principal.js';
import { SIGN_IN_GRANTS } from '../observability/metrics.js';
import { assertDecodesAsGo } from '../http/go-field-types.js';
import { goParamsType } from '../http/go-param-types.js';

const SIGN_INS = SIGN_IN_GRANTS;

/**
 * The per-client limit of a /token request: the web3 grant has its own (RATE_LIMIT_WEB3), as in the original.
 * An unknown grant_type takes nothing: the handler refuses it, as the original does before its limiter, so a
 * flood of them neither answers 429 nor empties the bucket the client's real sign-ins and refreshes share.
 */
export const tokenBucket = (req: ApiRequest): ClientBucket | null => {
  const grantType = req.form.get('grant_type');
  if (!grantType || !GRANTS.has(grantType)) return null;
  return grantType === 'web3' ? 'web3' : 'token';
};

export const token: Handler = async (req, ctx) => {
  const grantType = req.form.get('grant_type');
  const grant = grantType ? GRANTS.get(grantType) : undefined;
  if (!grant) throw apiError('unsupported_grant_type');
  try {
    grant.beforeBody?.(ctx);
    const body = req.json();
    assertDecodesAsGo(body, goParamsType(req)); // each grant decodes its own type, before reading anything else
    const response = await grant.handle(req, ctx, grant.schema(body));
    if (SIGN_INS.has(grant.grantType)) ctx.metrics.signIn(grant.grantType, outcomeOf(response));
    return response;
  } catch (err) {
    countRefusal(ctx, grant.grantType, err);
    throw err;
  }
};

/** A grant answers its OAuth-style refusals (grants/oauth-refusal.ts) rather than throwing them: their `error` is the outcome. */
function outcomeOf(response: ApiResponse): string {
  if ((response.status ?? 200) < 400) return 'success';
  const error = (response.body as { error?: unknown } | undefined)?.error;
  return typeof error === 'string' ? error : 'refused';
}

function countRefusal(ctx: AppContext, grantType: string, err: unknown): void {
  const code = err instanceof ApiError ? err.errorCode : 'unexpected_failure';
  if (SIGN_INS.has(grantType)) ctx.metrics.signIn(grantType, code);
  // The refresh grant refuses a reuse (an older token presented again) with refresh_token_already_used only.
  else if (grantType === 'refresh_token') ctx.metrics.refresh(code === 'refresh_token_already_used' ? 'reuse_detected' : code);
}
