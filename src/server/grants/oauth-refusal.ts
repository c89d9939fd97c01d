// The OAuth-style refusals of the id_token and web3 grants (REFERENCE §1.1): a 400 whose body is
// {error, error_description} instead of the service's {code, error_code, msg}. The original answers these
// for a token or signed message it does not accept; auth-js reads them as its error message.
import type { ApiResponse } from '../http/types.js';

export class OAuthRefusal extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

export const refusalResponse = (e: OAuthRefusal): ApiResponse => ({
  status: 400,
  body: { error: e.error, error_description: e.description },
});
