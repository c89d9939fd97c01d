// The custom access token hook (docs/hooks.md#custom-access-token): the claims about to be signed go out, the
// claims to sign come back. The original's minimum schema still holds afterwards: the required claims
// stay, with their types, or the grant fails with the original's 500 and nothing is signed.
import type { Queryable } from '../../db/pool.js';
import type { AccessTokenClaims } from '../auth/jwt.js';
import type { AppContext } from '../context.js';
import { apiError } from '../errors.js';
import { isObject, NO_ANSWER, undecodable } from './answer.js';
import { invokeHook, type HookRequest } from './invoke.js';
import { claimsSchemaProblems } from './claims-schema.js';

export interface CustomAccessTokenInput {
  claims: AccessTokenClaims;
  /** the sign-in method (password, otp, magiclink, anonymous, pkce, token_refresh, …) */
  authenticationMethod: string;
}

/** The claims the hook returns, checked; throws the hook's error or the original's 500. */
export async function customizeAccessToken(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  input: CustomAccessTokenInput,
  req: HookRequest,
  q?: Queryable,
): Promise<Record<string, unknown>> {
  const claims = await invokeHook(
    ctx,
    'customAccessToken',
    { user_id: input.claims.sub, claims: input.claims, authentication_method: input.authenticationMethod },
    req,
    claimsOf,
    q,
  );
  const problems = claimsSchemaProblems(claims);
  if (problems.length) {
    throw apiError('hook_failed', `output claims do not conform to the expected schema: \n${problems.map((p) => `- ${p}\n`).join('')}`);
  }
  return claims as Record<string, unknown>;
}

/**
 * The answer's claims as the original decodes them: no answer (204, or a function's SQL null) and
 * `"claims": null` leave no claims, which then fail the schema; an answer of `null` has no claims member;
 * an answer that is not an object, or claims that are neither an object nor null, fail the decoding.
 */
function claimsOf(output: unknown): unknown {
  if (output === NO_ANSWER) return null;
  if (output === null) throw apiError('hook_failed', 'output claims field is missing');
  if (!isObject(output)) throw undecodable();
  if (!('claims' in output)) throw apiError('hook_failed', 'output claims field is missing');
  if (output.claims !== null && !isObject(output.claims)) throw undecodable();
  return output.claims;
}
