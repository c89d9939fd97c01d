// The OAuth server's JSON bodies are read as the original's decoder reads them: an empty, unparsable or
// mistyped body is one 400 bad_json "Invalid JSON body" (the consent API words it "invalid JSON body"),
// not the service's usual parse messages.
import { ApiError, apiError } from '../errors.js';
import type { ApiRequest } from '../http/types.js';

export function oauthJsonBody<B>(req: ApiRequest<B>, error: 'oauth_bad_json' | 'oauth_consent_bad_json' = 'oauth_bad_json'): B {
  if (req.rawBody.length === 0) throw apiError(error);
  try {
    return req.body();
  } catch (err) {
    if (err instanceof ApiError && err.errorCode === 'bad_json') throw apiError(error);
    throw err;
  }
}
