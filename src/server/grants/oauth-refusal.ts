// The OAuth-style refusals of the id_token and web3 grants (REFERENCE §1.1): a 400 whose body is
// {error, error_description} instead of the service's {code, error_code, msg}. The original answers these
// for a token or signed message it does not accept; auth-js reads them as its error message.
import type { ApiResponse } from '../http/types.js';
import { apiVersionOf, API_VERSION_2024 } from '../http/render-error.js';

export class OAuthRefusal extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

/** The refusal's answer; it echoes the request's X-Supabase-Api-Version as every other error does. */
export function refusalResponse(e: OAuthRefusal, req: { headers: Record<string, string> }): ApiResponse {
  const body = { error: e.error, error_description: e.description };
  if (apiVersionOf(req.headers['x-supabase-api-version']) !== API_VERSION_2024) return { status: 400, body };
  return { status: 400, headers: { 'X-Supabase-Api-Version': API_VERSION_2024 }, body };
}
