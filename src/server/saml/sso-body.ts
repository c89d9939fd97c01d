// The body of POST /sso, apart from start.ts so that the route table can name it without loading the
// SAML libraries (routes/sso.ts loads those on the first request).
import { bodySchema } from '../http/validate.js';
import { PKCE_FIELDS } from '../verify/pkce-challenge.js';

export const ssoBody = bodySchema({
  provider_id: 'string',
  domain: 'string',
  redirect_to: 'string',
  skip_http_redirect: 'boolean',
  ...PKCE_FIELDS,
});
export type SsoBody = ReturnType<typeof ssoBody>;
