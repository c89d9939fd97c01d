// The Go type each of the original's handlers decodes its JSON body into. A body that parses but is no
// object (`[]`, `1`, `"x"`, `true`) fails that decoding, and the original answers Go's words for it,
// naming the type: "Could not parse request body as JSON: json: cannot unmarshal array into Go value of
// type api.SignupParams". `null` decodes into a struct as nothing at all, so it is no error there (nor
// here: answer.ts reads it as {}).
//
// Routes left out keep the generic "expected a JSON object": POST /magiclink (it reads its body itself, as
// the original's decoder there does: routes/magiclink.ts), POST /admin/users/{user_id} (ours only),
// the OAuth server's routes (their own "Invalid JSON body") and the routes that read a form or no body.
import type { ApiRequest } from './types.js';

/** By "METHOD route", the route as routes.ts spells it. */
const BY_ROUTE: ReadonlyMap<string, string> = new Map(
  Object.entries({
    'POST /signup': 'api.SignupParams',
    'POST /verify': 'api.VerifyParams',
    'PUT /user': 'api.UserUpdateParams',
    'POST /otp': 'api.OtpParams',
    'POST /recover': 'api.RecoverParams',
    'POST /resend': 'api.ResendConfirmationParams',
    'POST /invite': 'api.InviteParams',
    'POST /sso': 'api.SingleSignOnParams',
    'POST /factors': 'api.EnrollFactorParams',
    'POST /factors/{factor_id}/challenge': 'api.ChallengeFactorParams',
    'POST /factors/{factor_id}/verify': 'api.VerifyFactorParams',
    'POST /passkeys/authentication/verify': 'api.PasskeyAuthenticationVerifyParams',
    'POST /passkeys/registration/verify': 'api.PasskeyRegistrationVerifyParams',
    'PATCH /passkeys/{passkey_id}': 'api.PasskeyUpdateParams',
    'POST /admin/users': 'api.AdminUserParams',
    'PUT /admin/users/{user_id}': 'api.AdminUserParams',
    'DELETE /admin/users/{user_id}': 'api.adminUserDeleteParams',
    'PUT /admin/users/{user_id}/factors/{factor_id}': 'api.adminUserUpdateFactorParams',
    'POST /admin/generate_link': 'api.GenerateLinkParams',
    'POST /admin/sso/providers': 'api.CreateSSOProviderParams',
    'PUT /admin/sso/providers/{idp_id}': 'api.CreateSSOProviderParams',
    'POST /admin/custom-providers': 'api.AdminCustomOAuthProviderParams',
    'PUT /admin/custom-providers/{identifier}': 'api.AdminCustomOAuthProviderParams',
  }),
);

/** POST /token: each grant decodes into its own type, chosen by the query's grant_type. */
const BY_GRANT: ReadonlyMap<string, string> = new Map(
  Object.entries({
    password: 'api.PasswordGrantParams',
    refresh_token: 'api.RefreshTokenGrantParams',
    pkce: 'api.PKCEGrantParams',
    id_token: 'api.IdTokenGrantParams',
    web3: 'api.Web3GrantParams',
  }),
);

/** The captcha check decodes the body on its own, before the handler does (auth/captcha-guard.ts). */
export const CAPTCHA_PARAMS = 'api.captchaRequest';

/** The Go type the original decodes this request's body into, or undefined where there is none to name. */
export function goParamsType(req: Pick<ApiRequest, 'method' | 'route' | 'form'>): string | undefined {
  if (req.method === 'POST' && req.route === '/token') return BY_GRANT.get(req.form.get('grant_type') ?? '');
  return BY_ROUTE.get(`${req.method} ${req.route}`);
}
