// POST /sso: SAML single sign-on is not built, so it answers as the original does while SAML is disabled
// (docs/api.md#post-sso endpoint catalogue; test/absent-features.test.ts).
import { apiError } from '../errors.js';
import type { Handler } from '../http/types.js';

export const sso: Handler = () => {
  throw apiError('saml_provider_disabled');
};
