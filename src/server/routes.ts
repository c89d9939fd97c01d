// The route table: one line per endpoint saying everything about it — method, path, who may call it
// (guard: none | user | user+identities | user-signing-out | admin), its per-client limit, its captcha and its body schema.
// http/dispatch.ts enforces them in that order (limit, captcha, guard, schema; captcha first where a route says so) and hands the handler
// the principal the guard found. Handlers live in routes/ (one file per endpoint family) and grants/
// (one module per /token grant, each with its own body schema).
import type { Mount, Route } from './http/types.js';
import { health } from './routes/health.js';
import { ready } from './routes/ready.js';
import { settings } from './routes/settings.js';
import { jwks } from './routes/jwks.js';
import { signup, signupBody, signupBucket } from './routes/signup.js';
import { token, tokenBucket } from './routes/token.js';
import { verifyBody, verifyGet, verifyPost } from './routes/verify.js';
import { getUser } from './routes/user.js';
import { otp, otpBody } from './routes/otp.js';
import { magiclink, magiclinkBody } from './routes/magiclink.js';
import { recover, recoverBody } from './routes/recover.js';
import { uncheckedGrant } from './auth/captcha-guard.js';
import { adminListUsers, adminGetUser } from './routes/admin-users-read.js';
import { adminCreateUser } from './routes/admin-users-create.js';
import { adminUpdateUser } from './routes/admin-users-update.js';
import { adminUserBody } from './admin/user-params.js';
import { adminDeleteUser, deleteUserBody } from './routes/admin-users-delete.js';
import { adminGenerateLink, generateLinkBody } from './routes/admin-generate-link.js';
import { invite, inviteBody } from './routes/invite.js';
import { adminAuditLog } from './routes/admin-audit.js';
import { logout } from './routes/logout.js';
import { putUser, putUserBody } from './routes/user-update.js';
import { reauthenticate } from './routes/reauthenticate.js';
import { resend, resendBody } from './routes/resend.js';
import { sso, ssoBody, samlAcs, samlMetadata } from './routes/sso.js';
import { samlEnabled } from './saml/feature.js';
import { providerBody as ssoProviderBody } from './saml/provider-params.js';
import {
  adminCreateSsoProvider,
  adminDeleteSsoProvider,
  adminGetSsoProvider,
  adminListSsoProviders,
  adminUpdateSsoProvider,
} from './routes/admin-sso.js';
import {
  challengeBody,
  deleteFactor,
  enrollBody,
  noFields,
  postChallenge,
  postFactors,
  postVerify,
  verifyFactorBody,
} from './routes/mfa.js';
import { adminDeleteFactor, adminFactorBody, adminListFactors, adminUpdateFactor } from './routes/admin-factors.js';
import { passkeysEnabled } from './passkeys/feature.js';
import { challengeAnswerBody, noPasskeyFields } from './passkeys/challenge-answer.js';
import { passkeyRegistrationOptions, passkeyRegistrationVerify } from './routes/passkeys-registration.js';
import { passkeyAuthenticationOptions, passkeyAuthenticationVerify } from './routes/passkeys-authentication.js';
import { deletePasskey, listPasskeys, renamePasskey, renamePasskeyBody } from './routes/passkeys-manage.js';
import { adminDeletePasskey, adminListPasskeys } from './routes/admin-passkeys.js';
import {
  createProvider,
  deleteProvider,
  getProvider,
  listProviders,
  providerBody,
  updateProvider,
} from './routes/admin-custom-providers.js';
import { whenCustomOAuthEnabled } from './custom-providers/feature.js';
import { authorize, callback } from './routes/oauth.js';
import { linkIdentityAuthorize, unlinkIdentity } from './routes/identities.js';
import { afterGuard, oauthServerEnabled } from './oauth-server/feature.js';
import { openidConfiguration } from './routes/oauth-server-metadata.js';
import { registerOAuthClient } from './routes/oauth-register.js';
import {
  adminCreateOAuthClient,
  adminDeleteOAuthClient,
  adminGetOAuthClient,
  adminListOAuthClients,
  adminRegenerateOAuthClientSecret,
  adminUpdateOAuthClient,
} from './routes/admin-oauth-clients.js';
import { readRegisterParams, readUpdateParams } from './oauth-server/client-params.js';
import { oauthAuthorize } from './routes/oauth-authorize.js';
import { consentBody, getAuthorization, postConsent } from './routes/oauth-authorizations.js';
import { oauthToken } from './routes/oauth-token.js';
import { listGrants, revokeGrantOfClient } from './routes/oauth-grants.js';
import { userinfo } from './routes/oauth-userinfo.js';
import { scimEnabled } from './scim/feature.js';
import { SCIM_BASE_PATH } from './scim/documents.js';
import { scimNotFound, scimResourceTypes, scimSchemas, scimServiceProviderConfig } from './routes/scim.js';

export const ROUTES: Route[] = [
  { method: 'GET', path: '/health', guard: 'none', handler: health, quiet: true },
  { method: 'GET', path: '/ready', guard: 'none', handler: ready, quiet: true },
  { method: 'GET', path: '/settings', guard: 'none', handler: settings },
  { method: 'GET', path: '/.well-known/jwks.json', guard: 'none', handler: jwks },
  {
    method: 'POST',
    path: '/signup',
    guard: 'none',
    limit: signupBucket,
    captcha: true,
    captchaFirst: true,
    body: signupBody,
    handler: signup,
  },
  { method: 'POST', path: '/token', guard: 'none', limit: tokenBucket, captcha: uncheckedGrant, captchaFirst: true, handler: token }, // body: the grant's schema (grants/)
  { method: 'GET', path: '/verify', guard: 'none', limit: 'verify', changesState: true, handler: verifyGet },
  { method: 'POST', path: '/verify', guard: 'none', limit: 'verify', body: verifyBody, handler: verifyPost },
  { method: 'GET', path: '/user', guard: 'user+identities', handler: getUser },
  { method: 'PUT', path: '/user', guard: 'user', limit: 'user_update', body: putUserBody, handler: putUser },
  { method: 'POST', path: '/logout', guard: 'user-signing-out', handler: logout },
  { method: 'GET', path: '/reauthenticate', guard: 'user', changesState: true, handler: reauthenticate },
  { method: 'POST', path: '/otp', guard: 'none', limit: 'otp', captcha: true, body: otpBody, handler: otp },
  { method: 'POST', path: '/magiclink', guard: 'none', limit: 'magiclink', captcha: true, body: magiclinkBody, handler: magiclink },
  { method: 'POST', path: '/recover', guard: 'none', limit: 'recover', captcha: true, body: recoverBody, handler: recover },
  { method: 'POST', path: '/resend', guard: 'none', limit: 'resend', captcha: true, body: resendBody, handler: resend },
  { method: 'GET', path: '/admin/users', guard: 'admin', handler: adminListUsers },
  { method: 'POST', path: '/admin/users', guard: 'admin', body: adminUserBody, handler: adminCreateUser },
  { method: 'GET', path: '/admin/users/{user_id}', guard: 'admin', handler: adminGetUser },
  { method: 'POST', path: '/admin/users/{user_id}', guard: 'admin', body: adminUserBody, handler: adminCreateUser },
  { method: 'PUT', path: '/admin/users/{user_id}', guard: 'admin', body: adminUserBody, handler: adminUpdateUser },
  { method: 'DELETE', path: '/admin/users/{user_id}', guard: 'admin', body: deleteUserBody, handler: adminDeleteUser },
  { method: 'POST', path: '/admin/generate_link', guard: 'admin', body: generateLinkBody, handler: adminGenerateLink },
  { method: 'GET', path: '/admin/audit', guard: 'admin', handler: adminAuditLog },
  // custom OAuth/OIDC providers (docs/custom-providers.md#admin-api): CUSTOM_OAUTH_ENABLED after the admin guard
  { method: 'GET', path: '/admin/custom-providers', guard: 'admin', handler: whenCustomOAuthEnabled(listProviders) },
  {
    method: 'POST',
    path: '/admin/custom-providers',
    guard: 'admin',
    body: providerBody,
    handler: whenCustomOAuthEnabled(createProvider),
  },
  { method: 'GET', path: '/admin/custom-providers/{identifier}', guard: 'admin', handler: whenCustomOAuthEnabled(getProvider) },
  {
    method: 'PUT',
    path: '/admin/custom-providers/{identifier}',
    guard: 'admin',
    body: providerBody,
    handler: whenCustomOAuthEnabled(updateProvider),
  },
  { method: 'DELETE', path: '/admin/custom-providers/{identifier}', guard: 'admin', handler: whenCustomOAuthEnabled(deleteProvider) },
  { method: 'POST', path: '/invite', guard: 'admin', body: inviteBody, handler: invite },
  // SAML single sign-on (docs/sso-saml.md): the sign-in routes are switched by SAML_ENABLED; the admin routes
  // are not, as in the original, so providers can be set up before SAML is turned on
  { method: 'POST', path: '/sso', feature: samlEnabled, guard: 'none', limit: 'sso', captcha: true, body: ssoBody, handler: sso },
  { method: 'GET', path: '/sso/saml/metadata', feature: samlEnabled, guard: 'none', handler: samlMetadata },
  { method: 'POST', path: '/sso/saml/acs', feature: samlEnabled, guard: 'none', limit: 'saml_assertion', handler: samlAcs },
  { method: 'GET', path: '/admin/sso/providers', guard: 'admin', handler: adminListSsoProviders },
  {
    method: 'POST',
    path: '/admin/sso/providers',
    guard: 'admin',
    body: ssoProviderBody,
    handler: adminCreateSsoProvider,
  },
  { method: 'GET', path: '/admin/sso/providers/{idp_id}', guard: 'admin', handler: adminGetSsoProvider },
  {
    method: 'PUT',
    path: '/admin/sso/providers/{idp_id}',
    guard: 'admin',
    body: ssoProviderBody,
    handler: adminUpdateSsoProvider,
  },
  {
    method: 'DELETE',
    path: '/admin/sso/providers/{idp_id}',
    guard: 'admin',
    body: noFields,
    handler: adminDeleteSsoProvider,
  },
  // multi-factor authentication (docs/mfa.md)
  { method: 'POST', path: '/factors', guard: 'user', body: enrollBody, handler: postFactors },
  {
    method: 'POST',
    path: '/factors/{factor_id}/challenge',
    guard: 'user',
    limit: 'mfa_challenge',
    body: challengeBody,
    handler: postChallenge,
  },
  { method: 'POST', path: '/factors/{factor_id}/verify', guard: 'user', limit: 'mfa_verify', body: verifyFactorBody, handler: postVerify },
  { method: 'DELETE', path: '/factors/{factor_id}', guard: 'user', body: noFields, handler: deleteFactor },
  { method: 'GET', path: '/admin/users/{user_id}/factors', guard: 'admin', handler: adminListFactors },
  { method: 'PUT', path: '/admin/users/{user_id}/factors/{factor_id}', guard: 'admin', body: adminFactorBody, handler: adminUpdateFactor },
  { method: 'DELETE', path: '/admin/users/{user_id}/factors/{factor_id}', guard: 'admin', body: noFields, handler: adminDeleteFactor },
  // passkeys (docs/passkeys.md): every /passkeys route is switched by PASSKEY_ENABLED
  {
    method: 'POST',
    path: '/passkeys/authentication/options',
    feature: passkeysEnabled,
    guard: 'none',
    limit: 'passkey',
    captcha: true,
    body: noPasskeyFields,
    handler: passkeyAuthenticationOptions,
  },
  {
    method: 'POST',
    path: '/passkeys/authentication/verify',
    feature: passkeysEnabled,
    guard: 'none',
    body: challengeAnswerBody,
    handler: passkeyAuthenticationVerify,
  },
  {
    method: 'POST',
    path: '/passkeys/registration/options',
    feature: passkeysEnabled,
    guard: 'user',
    body: noPasskeyFields,
    handler: passkeyRegistrationOptions,
  },
  {
    method: 'POST',
    path: '/passkeys/registration/verify',
    feature: passkeysEnabled,
    guard: 'user',
    body: challengeAnswerBody,
    handler: passkeyRegistrationVerify,
  },
  { method: 'GET', path: '/passkeys', feature: passkeysEnabled, guard: 'user', handler: listPasskeys },
  {
    method: 'PATCH',
    path: '/passkeys/{passkey_id}',
    feature: passkeysEnabled,
    guard: 'user',
    body: renamePasskeyBody,
    handler: renamePasskey,
  },
  {
    method: 'DELETE',
    path: '/passkeys/{passkey_id}',
    feature: passkeysEnabled,
    guard: 'user',
    body: noPasskeyFields,
    handler: deletePasskey,
  },
  { method: 'GET', path: '/admin/users/{user_id}/passkeys', guard: 'admin', handler: adminListPasskeys },
  {
    method: 'DELETE',
    path: '/admin/users/{user_id}/passkeys/{passkey_id}',
    guard: 'admin',
    body: noPasskeyFields,
    handler: adminDeletePasskey,
  },
  { method: 'GET', path: '/authorize', guard: 'none', changesState: true, handler: authorize },
  { method: 'GET', path: '/callback', guard: 'none', changesState: true, handler: callback },
  { method: 'POST', path: '/callback', guard: 'none', handler: callback }, // Apple's form_post
  { method: 'GET', path: '/user/identities/authorize', guard: 'user', changesState: true, handler: linkIdentityAuthorize },
  { method: 'DELETE', path: '/user/identities/{identity_id}', guard: 'user', handler: unlinkIdentity },
  // the OAuth 2.1 authorization server (docs/oauth-server.md): every route but the OpenID document is switched by
  // OAUTH_SERVER_ENABLED, the admin and /user ones after their guard (afterGuard), as the original orders them
  { method: 'GET', path: '/.well-known/openid-configuration', guard: 'none', handler: openidConfiguration },
  {
    method: 'GET',
    path: '/.well-known/oauth-authorization-server',
    feature: oauthServerEnabled,
    guard: 'none',
    handler: openidConfiguration,
  },
  { method: 'GET', path: '/admin/oauth/clients', guard: 'admin', handler: afterGuard(adminListOAuthClients) },
  {
    method: 'POST',
    path: '/admin/oauth/clients',
    guard: 'admin',
    body: readRegisterParams,
    handler: afterGuard(adminCreateOAuthClient),
  },
  { method: 'GET', path: '/admin/oauth/clients/{client_id}', guard: 'admin', handler: afterGuard(adminGetOAuthClient) },
  {
    method: 'PUT',
    path: '/admin/oauth/clients/{client_id}',
    guard: 'admin',
    body: readUpdateParams,
    handler: afterGuard(adminUpdateOAuthClient),
  },
  {
    method: 'DELETE',
    path: '/admin/oauth/clients/{client_id}',
    guard: 'admin',
    body: noFields,
    handler: afterGuard(adminDeleteOAuthClient),
  },
  {
    method: 'POST',
    path: '/admin/oauth/clients/{client_id}/regenerate_secret',
    guard: 'admin',
    body: noFields,
    handler: afterGuard(adminRegenerateOAuthClientSecret),
  },
  {
    method: 'POST',
    path: '/oauth/clients/register',
    feature: oauthServerEnabled,
    guard: 'none',
    limit: 'oauth_client_register',
    body: readRegisterParams,
    handler: registerOAuthClient,
  },
  { method: 'GET', path: '/oauth/authorize', feature: oauthServerEnabled, guard: 'none', changesState: true, handler: oauthAuthorize },
  // a form (RFC 6749) or JSON body, read by the handler as the original reads both (oauth-server/token-params.ts)
  { method: 'POST', path: '/oauth/token', feature: oauthServerEnabled, guard: 'none', handler: oauthToken },
  {
    method: 'GET',
    path: '/oauth/authorizations/{authorization_id}',
    feature: oauthServerEnabled,
    guard: 'user',
    changesState: true, // claims the authorization for the user, and approves it when consent was given
    handler: getAuthorization,
  },
  {
    method: 'POST',
    path: '/oauth/authorizations/{authorization_id}/consent',
    feature: oauthServerEnabled,
    guard: 'user',
    body: consentBody,
    handler: postConsent,
  },
  { method: 'GET', path: '/oauth/userinfo', feature: oauthServerEnabled, guard: 'user', handler: userinfo },
  { method: 'GET', path: '/user/oauth/grants', guard: 'user', handler: afterGuard(listGrants) },
  { method: 'DELETE', path: '/user/oauth/grants', guard: 'user', body: noFields, handler: afterGuard(revokeGrantOfClient) },
  // SCIM 2.0 discovery (docs/scim.md): open, as in the original; the whole prefix is a mount (MOUNTS below)
  {
    method: 'GET',
    path: `${SCIM_BASE_PATH}/ServiceProviderConfig`,
    feature: scimEnabled,
    guard: 'none',
    handler: scimServiceProviderConfig,
  },
  { method: 'GET', path: `${SCIM_BASE_PATH}/ResourceTypes`, feature: scimEnabled, guard: 'none', handler: scimResourceTypes },
  { method: 'GET', path: `${SCIM_BASE_PATH}/Schemas`, feature: scimEnabled, guard: 'none', handler: scimSchemas },
];

/**
 * Prefixes a feature owns whole (http/types.ts Mount): a path or method the table does not serve there meets
 * the feature switch first, then the prefix's own 404 (SCIM's is an RFC 7644 error) or a 405.
 */
export const MOUNTS: Mount[] = [{ prefix: SCIM_BASE_PATH, feature: scimEnabled, notFound: scimNotFound }];
