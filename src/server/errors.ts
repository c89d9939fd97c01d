// One error class and one table: every error the service answers is defined here once, with its
// status, its error_code and its default message; a throwing site names the entry (apiError('user_banned')),
// overriding the message only where it carries data. http/render-error.ts is the one renderer.
// The error_code strings and messages are wire API that @supabase/auth-js and clients read: never rename
// them. Where the original answers one error_code with two statuses or messages, each variant is its own
// entry (user_banned 403 on bearer checks, user_banned_at_sign_in 400 at the grants).

interface ErrorEntry {
  status: number;
  code: string;
  msg: string;
  retryAfter?: number;
}

const e = <C extends string>(status: number, code: C, msg: string, retryAfter?: number) => ({ status, code, msg, retryAfter });

export const ERRORS = {
  // HTTP layer
  not_found: e(404, 'not_found', 'Not Found'),
  method_not_allowed: e(405, 'method_not_allowed', 'Method Not Allowed'),
  request_entity_too_large: e(413, 'request_entity_too_large', 'Request body too large'),
  bad_json: e(400, 'bad_json', 'Could not parse request body as JSON: expected a JSON object'),
  bad_json_nul: e(400, 'bad_json', 'Could not parse request body as JSON: NUL characters (\\u0000) are not allowed'),
  // a body nested deeper than the original's decoder reads (http/json-depth.ts); the message names the character
  bad_json_depth: e(400, 'bad_json', "Could not parse request body as JSON: invalid character '{' exceeded max depth"),
  query_nul: e(400, 'validation_failed', 'Query parameters cannot contain NUL characters'),
  path_nul: e(400, 'validation_failed', 'Path parameters cannot contain NUL characters'),
  // ours: what the HTTP guard refuses before uWS sees it (docs/http-guard.md#what-the-guard-refuses)
  http_malformed: e(400, 'bad_request', 'Malformed HTTP request'),
  http_head_too_large: e(431, 'request_header_fields_too_large', 'Request header fields too large'),
  http_head_timeout: e(408, 'request_timeout', 'The request head did not arrive in time'),
  http_body_timeout: e(408, 'request_timeout', 'The request body did not arrive in time'),
  http_version_not_supported: e(505, 'http_version_not_supported', 'HTTP version not supported: use HTTP/1.1'),
  request_timeout: e(504, 'request_timeout', 'Processing this request timed out, please retry after a moment.'),
  // ours: never written (the connection is gone); it names the request in the log and stops its work
  client_closed_request: e(499, 'client_closed_request', 'The client closed the connection before the answer'),
  unexpected_failure: e(500, 'unexpected_failure', 'Unexpected failure, please check server logs for more information'),
  // The database refused a new user (a trigger raised, a constraint failed): users/insert-new-user.ts.
  database_error_saving_user: e(500, 'unexpected_failure', 'Database error saving new user'),
  database_error_creating_anonymous_user: e(500, 'unexpected_failure', 'Database error creating anonymous user'),
  database_error_creating_user: e(500, 'unexpected_failure', 'Database error creating new user'),
  // WEBAUTHN_RP_* empty, or an RP id the original refuses, while passkeys or WebAuthn factors are on
  // (webauthn/relying-party.ts); the original's text
  webauthn_not_configured: e(500, 'unexpected_failure', 'Failed to initialize WebAuthn'),
  // ours, not the original's: the database or the process cannot serve right now (README "Faults and readiness")
  database_unavailable: e(503, 'database_unavailable', 'The database is unavailable, please retry after a moment.', 5),
  database_busy: e(503, 'database_busy', 'The database is busy, please retry after a moment.', 1),
  over_capacity: e(503, 'over_capacity', 'The service is at capacity, please retry after a moment.', 1),
  not_ready: e(503, 'not_ready', 'Not ready', 5),
  // request limits
  over_request_rate_limit: e(429, 'over_request_rate_limit', 'Request rate limit reached'),
  email_send_interval: e(429, 'over_email_send_rate_limit', 'For security purposes, you can only request this after a while.'),
  sms_send_interval: e(429, 'over_sms_send_rate_limit', 'For security purposes, you can only request this after a while.'),
  over_email_send_rate_limit: e(429, 'over_email_send_rate_limit', 'email rate limit exceeded'),
  over_sms_send_rate_limit: e(429, 'over_sms_send_rate_limit', 'SMS rate limit exceeded'),
  captcha_missing: e(400, 'captcha_failed', 'captcha protection: request disallowed (no captcha_token found)'),
  captcha_disallowed: e(400, 'captcha_failed', 'captcha protection: request disallowed'),
  captcha_unavailable: e(503, 'captcha_failed', 'captcha verification process failed'),
  // bearer and admin checks, in the original's order (auth/bearer.ts, auth/admin.ts)
  no_authorization: e(401, 'no_authorization', 'This endpoint requires a valid Bearer token'),
  bad_jwt: e(403, 'bad_jwt', 'invalid JWT: unable to parse or verify signature'),
  bad_jwt_missing_sub: e(403, 'bad_jwt', 'invalid claim: missing sub claim'),
  bad_jwt_sub: e(403, 'bad_jwt', 'invalid claim: sub claim must be a UUID'),
  bad_jwt_session_id: e(403, 'bad_jwt', 'invalid claim: session_id claim must be a UUID'),
  bad_jwt_id_token: e(403, 'bad_jwt', 'invalid JWT: an ID token is not an access token'),
  audience_mismatch: e(400, 'validation_failed', "Token audience doesn't match request audience"),
  user_not_found: e(403, 'user_not_found', 'User from sub claim in JWT does not exist'),
  session_not_found: e(403, 'session_not_found', 'Session from session_id claim in JWT does not exist'),
  session_required: e(403, 'session_not_found', 'This action needs a session, and the token names none (no session_id claim)'),
  user_banned: e(403, 'user_banned', 'User is banned'),
  session_expired: e(403, 'session_expired', 'Session is no longer valid'),
  not_admin: e(403, 'not_admin', 'User not allowed'),
  app_metadata_not_admin: e(403, 'not_admin', 'Updating app_metadata requires admin privileges'),
  // /token grants
  unsupported_grant_type: e(400, 'invalid_credentials', 'unsupported_grant_type'),
  invalid_credentials: e(400, 'invalid_credentials', 'Invalid login credentials'),
  user_banned_at_sign_in: e(400, 'user_banned', 'User is banned'),
  sign_in_email_and_phone: e(400, 'validation_failed', 'Only an email address or phone number should be provided on login.'),
  sign_in_no_address: e(400, 'validation_failed', 'missing email or phone'),
  email_not_confirmed: e(400, 'email_not_confirmed', 'Email not confirmed'),
  phone_not_confirmed: e(400, 'phone_not_confirmed', 'Phone not confirmed'),
  refresh_token_not_valid: e(400, 'validation_failed', 'Refresh token is not valid'),
  refresh_token_not_found: e(400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found'),
  refresh_token_already_used: e(400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used'),
  // a v2 token whose counter is ahead of its session's: signed with the session's key, yet never issued
  refresh_token_not_issued_here: e(400, 'validation_failed', 'Invalid Refresh Token: Not Issued By This Server'),
  refresh_token_user_banned: e(400, 'user_banned', 'Invalid Refresh Token: User Banned'),
  // The session limits at the refresh grant, one message per reason as the original words them
  // (docs/tokens-and-sessions.md#session-limits).
  refresh_session_expired: e(400, 'session_expired', 'Invalid Refresh Token: Session Expired'),
  refresh_session_inactive: e(400, 'session_expired', 'Invalid Refresh Token: Session Expired (Inactivity)'),
  refresh_session_low_aal: e(400, 'session_expired', 'Invalid Refresh Token: Session Expired (Low AAL: User Needs MFA Verification)'),
  refresh_session_newer_login: e(400, 'session_expired', 'Invalid Refresh Token: Session Expired (Revoked by Newer Login)'),
  pkce_grant_incomplete: e(400, 'validation_failed', 'invalid request: both auth code and code verifier should be non-empty'),
  flow_state_not_found: e(404, 'flow_state_not_found', 'invalid flow state, no valid flow state found'),
  flow_state_expired: e(422, 'flow_state_expired', 'invalid flow state, flow state has expired'),
  bad_code_verifier: e(400, 'bad_code_verifier', 'code challenge does not match previously saved code verifier'),
  // grant_type=web3 (docs/web3.md#errors): both chains off, or the one named; a chain it does not know
  web3_provider_disabled: e(422, 'web3_provider_disabled', 'Web3 provider is disabled'),
  web3_solana_disabled: e(422, 'web3_provider_disabled', 'Solana Web3 provider is disabled'),
  web3_ethereum_disabled: e(422, 'web3_provider_disabled', 'Ethereum Web3 provider is disabled'),
  web3_unsupported_chain: e(400, 'web3_unsupported_chain', 'Unsupported chain'),
  saml_provider_disabled: e(404, 'saml_provider_disabled', 'SAML 2.0 is disabled'),
  // SAML single sign-on (docs/sso-saml.md#errors), the original's codes, statuses and wording
  sso_provider_and_domain: e(400, 'validation_failed', 'Only one of provider_id or domain supported'),
  sso_provider_or_domain: e(400, 'validation_failed', 'A provider_id or domain needs to be provided'),
  sso_provider_not_found: e(404, 'sso_provider_not_found', 'No such SSO provider'),
  sso_domain_not_found: e(404, 'sso_provider_not_found', 'No SSO provider assigned for this domain'),
  sso_provider_disabled: e(404, 'sso_provider_disabled', 'SSO Provider is currently disabled'),
  sso_provider_disabled_for_domain: e(404, 'sso_provider_disabled', 'SSO Provider assigned for this domain is currently disabled'),
  sso_admin_provider_not_found: e(404, 'sso_provider_not_found', 'SSO Identity Provider not found'),
  sso_type_invalid: e(400, 'validation_failed', "Only 'saml' supported for SSO provider type"),
  sso_metadata_both: e(400, 'validation_failed', 'Only one of metadata_xml or metadata_url needs to be set'),
  sso_metadata_missing: e(400, 'validation_failed', 'Either metadata_xml or metadata_url must be set'),
  sso_metadata_url_invalid: e(400, 'validation_failed', 'metadata_url is not a valid URL'),
  sso_metadata_url_not_https: e(400, 'validation_failed', 'metadata_url is not a HTTPS URL'),
  sso_name_id_format_invalid: e(400, 'validation_failed', 'name_id_format must be unspecified or one of'),
  sso_field_invalid: e(400, 'validation_failed', 'Invalid SSO provider field'),
  saml_metadata_invalid_utf8: e(
    400,
    'validation_failed',
    'SAML Metadata XML contains invalid UTF-8 characters, which are not supported at this time',
  ),
  // ours: the original answers unparsable metadata with a 500
  saml_metadata_invalid: e(400, 'validation_failed', 'SAML Metadata is not valid XML'),
  saml_metadata_no_entity_id: e(400, 'validation_failed', 'SAML Metadata does not contain an EntityID'),
  saml_metadata_no_idp: e(400, 'validation_failed', 'SAML Metadata does not contain any IDPSSODescriptor'),
  saml_metadata_many_idps: e(400, 'validation_failed', 'SAML Metadata contains multiple IDPSSODescriptors'),
  saml_metadata_fetch_failed: e(400, 'saml_metadata_fetch_failed', 'Error fetching SAML Metadata'),
  saml_idp_already_exists: e(422, 'saml_idp_already_exists', 'SAML Identity Provider with this EntityID already exists'),
  sso_domain_already_exists: e(400, 'sso_domain_already_exists', 'SSO Domain is already assigned to an SSO identity provider'),
  saml_entity_id_mismatch: e(400, 'saml_entity_id_mismatch', 'SAML Metadata can be updated only if the EntityID matches for the provider'),
  sso_update_conflict: e(422, 'conflict', 'Updating SSO provider failed, likely due to a conflict. Try again?'),
  // ours: the original answers a taken resource_id (or a create that lost a race) with a 500
  sso_create_conflict: e(422, 'conflict', 'Creating SSO provider failed: its entity ID, a domain or its resource_id is already taken'),
  saml_relay_state_not_found: e(404, 'saml_relay_state_not_found', 'SAML RelayState does not exist, try logging in again?'),
  saml_relay_state_expired: e(422, 'saml_relay_state_expired', 'SAML RelayState has expired. Try logging in again?'),
  saml_relay_state_invalid: e(400, 'validation_failed', 'SAML RelayState is not a valid UUID or URL'),
  saml_artifact_unsupported: e(400, 'validation_failed', 'SAML Artifact response can only be used with SP initiated flow'),
  saml_response_missing: e(400, 'validation_failed', 'SAMLResponse is missing'),
  saml_response_not_base64: e(400, 'validation_failed', 'SAMLResponse is not a valid Base64 string'),
  saml_response_not_xml: e(400, 'validation_failed', 'SAMLResponse is not a valid XML SAML assertion'),
  saml_idp_not_found: e(404, 'saml_idp_not_found', 'A SAML connection has not been established with this Identity Provider'),
  saml_assertion_invalid: e(400, 'validation_failed', 'SAML Assertion is not valid'),
  saml_assertion_no_user_id: e(
    400,
    'saml_assertion_no_user_id',
    'SAML Assertion did not contain a persistent Subject Identifier attribute or Subject NameID uniquely identifying this user',
  ),
  saml_assertion_no_email: e(400, 'saml_assertion_no_email', 'SAML Assertion does not contain an email address'),
  user_sso_managed: e(422, 'user_sso_managed', 'Updating email, phone, password of a SSO account only possible via SSO'),
  // providers switched off: the original answers 400 on some routes and 422 on others
  email_signups_disabled: e(400, 'email_provider_disabled', 'Email signups are disabled'),
  phone_signups_disabled: e(400, 'phone_provider_disabled', 'Phone signups are disabled'),
  email_logins_disabled: e(400, 'email_provider_disabled', 'Email logins are disabled'),
  phone_logins_disabled: e(400, 'phone_provider_disabled', 'Phone logins are disabled'),
  email_logins_disabled_422: e(422, 'email_provider_disabled', 'Email logins are disabled'),
  phone_logins_disabled_422: e(422, 'phone_provider_disabled', 'Phone logins are disabled'),
  magic_link_disabled: e(422, 'email_provider_disabled', 'Login with magic link is disabled'),
  phone_provider_unsupported: e(400, 'phone_provider_disabled', 'Unsupported phone provider'),
  anonymous_provider_disabled: e(422, 'anonymous_provider_disabled', 'Anonymous sign-ins are disabled'),
  signup_disabled: e(422, 'signup_disabled', 'Signups not allowed for this instance'),
  otp_disabled: e(422, 'otp_disabled', 'Signups not allowed for otp'),
  // addresses and passwords
  email_required: e(400, 'validation_failed', 'An email address is required'),
  email_too_long: e(400, 'validation_failed', 'An email address is too long'),
  email_invalid: e(400, 'validation_failed', 'Unable to validate email address: invalid format'),
  email_invalid_at_verify: e(422, 'validation_failed', 'Invalid email format'),
  phone_invalid: e(400, 'validation_failed', 'Invalid phone number format (E.164 required)'),
  email_exists: e(422, 'email_exists', 'A user with this email address has already been registered'),
  phone_exists: e(422, 'phone_exists', 'A user with this phone number has already been registered'),
  phone_exists_admin: e(422, 'phone_exists', 'Phone number already registered by another user'),
  user_already_exists: e(400, 'user_already_exists', 'User already registered'),
  user_id_exists: e(422, 'user_already_exists', 'A user with this ID already exists'),
  password_required: e(400, 'validation_failed', 'Signup requires a valid password'),
  password_too_long: e(400, 'validation_failed', 'Password cannot be longer than 72 characters'),
  weak_password: e(422, 'weak_password', 'Password is too weak'),
  // The original's code and message, but a 503 with Retry-After rather than its 500: the range API failed, not
  // the request (docs/passwords.md#leaked-passwords). Only with PASSWORD_HIBP_FAIL_CLOSED.
  pwned_check_unavailable: e(503, 'unexpected_failure', 'Unable to perform password strength check with HaveIBeenPwned.org.'),
  // An AWS KMS signing key (docs/tokens-and-sessions.md#aws-kms-signing-keys): the original's 500 and message when
  // KMS refuses; a 503 with Retry-After, ours, when KMS cannot be reached, stalls, throttles or fails inside.
  token_signing_failed: e(500, 'unexpected_failure', 'error generating jwt token'),
  token_signing_unavailable: e(
    503,
    'unexpected_failure',
    'error generating jwt token: the signing service is unavailable, please retry after a moment.',
    5,
  ),
  same_password: e(422, 'same_password', 'New password should be different from the old password.'),
  reauthentication_needed: e(400, 'reauthentication_needed', 'Password update requires reauthentication'),
  // The original words both the same.
  current_password_required: e(400, 'current_password_required', 'Current password required when setting new password.'),
  current_password_invalid: e(400, 'current_password_invalid', 'Current password required when setting new password.'),
  reauthentication_not_valid: e(422, 'reauthentication_not_valid', 'Nonce has expired or is invalid'),
  reauthentication_no_address: e(400, 'validation_failed', 'Reauthentication requires the user to have an email or a phone number'),
  reauthentication_email_not_confirmed: e(422, 'email_not_confirmed', 'Please verify your email first.'),
  reauthentication_phone_not_confirmed: e(422, 'phone_not_confirmed', 'Please verify your phone first.'),
  anonymous_password_only: e(422, 'validation_failed', 'Updating password of an anonymous user without an email or phone is not allowed'),
  // request bodies: the checks of each route, in the original's order
  validation_failed: e(400, 'validation_failed', 'Invalid request'),
  signup_email_and_phone: e(400, 'validation_failed', 'Only an email address or phone number should be provided on signup.'),
  signup_phone_pkce: e(400, 'validation_failed', 'PKCE not supported for phone signups'),
  otp_email_and_phone: e(400, 'validation_failed', 'Only an email address or phone number should be provided'),
  otp_channel_with_email: e(400, 'validation_failed', 'Channel should only be specified with Phone OTP'),
  otp_no_address: e(400, 'validation_failed', 'One of email or phone must be set'),
  recover_email_required: e(400, 'validation_failed', 'Password recovery requires an email'),
  magic_link_email_required: e(422, 'validation_failed', 'Password recovery requires an email'),
  resend_type_invalid: e(400, 'validation_failed', 'Missing one of these types: signup, email_change, sms, phone_change'),
  resend_email_required: e(400, 'validation_failed', 'Type provided requires an email address'),
  resend_phone_required: e(400, 'validation_failed', 'Type provided requires a phone number'),
  resend_email_and_phone: e(400, 'validation_failed', 'Only an email address or phone number should be provided.'),
  resend_no_address: e(400, 'validation_failed', 'Missing email address or phone number'),
  verify_type_required: e(400, 'validation_failed', 'Verify requires a verification type'),
  verify_token_or_hash: e(400, 'validation_failed', 'Verify requires either a token or a token hash'),
  verify_token_required: e(400, 'validation_failed', 'Verify requires a token or a token hash'),
  verify_hash_only: e(400, 'validation_failed', 'Only the token_hash and type should be provided'),
  verify_email_or_phone: e(400, 'validation_failed', 'Only an email address or phone number should be provided on verify'),
  verify_type_invalid: e(400, 'validation_failed', 'Invalid email verification type'),
  pkce_params_incomplete: e(400, 'validation_failed', 'PKCE flow requires code_challenge_method and code_challenge'),
  pkce_method_unsupported: e(400, 'validation_failed', 'Invalid code_challenge_method'),
  pkce_challenge_length: e(400, 'validation_failed', 'code challenge has to be between 43 and 128 characters'),
  pkce_challenge_characters: e(
    400,
    'validation_failed',
    'code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes',
  ),
  // the original's wording (docs/sms.md#channels); clients may show it as is
  sms_channel_invalid: e(
    400,
    'validation_failed',
    "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.",
  ),
  logout_scope: e(400, 'validation_failed', 'Unsupported logout scope'),
  // one-time tokens
  otp_expired: e(403, 'otp_expired', 'Token has expired or is invalid'),
  link_expired: e(403, 'otp_expired', 'Email link is invalid or has expired'),
  // The original's wrapped error, its inner error's status and text included.
  flow_state_not_found_at_verify: e(
    400,
    'flow_state_not_found',
    'No associated flow state found. 422: No valid flow state found for user.',
  ),
  email_send_failed: e(500, 'unexpected_failure', 'Error sending email'),
  email_address_not_authorized: e(400, 'email_address_not_authorized', 'Email address cannot be used as it is not authorized'),
  // MAILER_EMAIL_VALIDATION_* refused the recipient (delivery/mail/address-check.ts); the message names it
  email_address_invalid: e(400, 'email_address_invalid', 'Email address is invalid'),
  sms_send_failed: e(422, 'sms_send_failed', 'Error sending OTP to provider'),
  // SMS_PROVIDER names no gateway (docs/sms.md#gateways): the original's 500s, worded apart for MFA there.
  sms_gateway_unknown: e(500, 'unexpected_failure', 'Unable to get SMS provider'),
  mfa_sms_gateway_unknown: e(500, 'unexpected_failure', 'Failed to get SMS provider'),
  // external providers (docs/oauth.md#errors): /authorize answers JSON; /callback puts these in the redirect
  provider_unsupported: e(400, 'validation_failed', 'Unsupported provider'),
  oauth_provider_not_supported: e(400, 'oauth_provider_not_supported', 'Unsupported provider'),
  oauth_state_missing: e(400, 'bad_oauth_callback', 'OAuth state parameter missing'),
  oauth_state_invalid: e(400, 'bad_oauth_state', 'OAuth state parameter is invalid'),
  oauth_state_not_found: e(400, 'bad_oauth_state', 'OAuth state not found or expired'),
  oauth_state_expired: e(400, 'bad_oauth_state', 'OAuth state has expired'),
  flow_state_already_used: e(400, 'flow_state_already_used', 'State has already been used'),
  oauth_code_missing: e(400, 'bad_oauth_callback', 'OAuth callback with missing authorization code missing'),
  oauth_exchange_failed: e(500, 'unexpected_failure', 'Unable to exchange external code'),
  oauth_profile_failed: e(500, 'unexpected_failure', 'Error getting user profile from external provider'),
  oauth_email_missing: e(500, 'unexpected_failure', 'Error getting user email from external provider'),
  oauth_multiple_accounts: e(
    500,
    'unexpected_failure',
    'Multiple accounts with the same email address in the same linking domain detected',
  ),
  provider_email_needs_verification: e(422, 'provider_email_needs_verification', 'Unverified email with provider'),
  // Linking an identity to a signed-in user without an email (oauth/identity-link.ts linkToSignedInUser).
  link_email_exists: e(400, 'email_exists', 'A user with this email address has already been registered'),
  link_email_not_confirmed: e(422, 'email_not_confirmed', 'Unverified email with provider'),
  // GET /authorize?invite_token= naming no pending invite, and the callback's invite gone meanwhile: the original's two answers
  invite_token_unknown: e(404, 'user_not_found', 'User identified by token not found'),
  invite_not_found: e(404, 'invite_not_found', 'Invite not found'),
  invite_email_mismatch: e(400, 'validation_failed', 'Invited email does not match emails from external provider'),
  // the id_token grant (its own refusals are OAuth-style bodies, grants/id-token.ts)
  provider_disabled: e(400, 'provider_disabled', 'Provider is not enabled'),
  // grant_type=id_token: an Apple or Azure token's own issuer, read before anything is fetched (grants/id-token-issuer.ts)
  id_token_issuer_undetected: e(400, 'validation_failed', 'Unable to detect issuer in ID token'),
  id_token_issuer_not_apple: e(400, 'validation_failed', 'Detected ID token issuer is not an Apple ID token issuer'),
  id_token_issuer_not_azure: e(400, 'validation_failed', 'Detected ID token issuer is not an Azure ID token issuer'),
  id_token_issuer_mismatch: e(400, 'validation_failed', 'Provided issuer does not match ID token issuer'),
  custom_oidc_not_allowed: e(400, 'validation_failed', 'Custom OIDC provider not allowed'),
  // /admin/custom-providers (docs/custom-providers.md#errors); validation messages are given at the throwing site
  custom_oauth_disabled: e(404, 'feature_disabled', 'Custom OAuth providers are disabled'),
  custom_provider_not_found: e(404, 'custom_provider_not_found', 'Custom OAuth provider not found'),
  custom_provider_exists: e(400, 'conflict', 'A custom OAuth provider with this identifier already exists'),
  over_custom_provider_quota: e(400, 'over_custom_provider_quota', 'Maximum number of custom OAuth/OIDC providers reached'),
  // identities (manual linking, SECURITY_MANUAL_LINKING_ENABLED)
  manual_linking_disabled: e(404, 'manual_linking_disabled', 'Manual linking is disabled'),
  identity_already_exists: e(422, 'identity_already_exists', 'Identity is already linked'),
  identity_linked_to_another_user: e(422, 'identity_already_exists', 'Identity is already linked to another user'),
  identity_not_found: e(422, 'identity_not_found', "Identity doesn't exist"),
  identity_id_format: e(404, 'validation_failed', 'identity_id must be an UUID'),
  single_identity_not_deletable: e(422, 'single_identity_not_deletable', 'User must have at least 1 identity after unlinking'),
  email_conflict_identity_not_deletable: e(422, 'email_conflict_identity_not_deletable', 'Unable to unlink identity due to email conflict'),
  unexpected_audience: e(403, 'unexpected_audience', "Token audience doesn't match request audience"),
  // admin API
  admin_user_id: e(404, 'validation_failed', 'user_id must be an UUID'),
  admin_user_not_found: e(404, 'user_not_found', 'User not found'),
  admin_email_not_found: e(404, 'user_not_found', 'User with this email not found'),
  admin_user_no_address: e(400, 'validation_failed', 'Cannot create a user without either an email or phone'),
  admin_id_format: e(400, 'validation_failed', 'ID must conform to the uuid v4 format'),
  admin_id_nil: e(400, 'validation_failed', 'ID cannot be a nil uuid'),
  admin_password_and_hash: e(400, 'validation_failed', 'Only a password or a password hash should be provided'),
  admin_password_hash_format: e(
    400,
    'validation_failed',
    'Invalid password hash format: expected an argon2, bcrypt or Firebase scrypt hash',
  ),
  // the original's requireNotAnonymous, on /factors and /passkeys/registration (mfa/factor-access.ts)
  anonymous_not_allowed: e(403, 'no_authorization', 'Anonymous user not allowed to perform these actions'),
  admin_ban_duration: e(400, 'validation_failed', 'invalid format for ban duration'),
  admin_link_type: e(400, 'validation_failed', 'Invalid email action link type requested'),
  admin_link_current_email: e(400, 'validation_failed', 'Enable secure email change to generate link for current email'),
  admin_pagination: e(400, 'validation_failed', 'Bad Pagination Parameters'),
  admin_sort: e(400, 'validation_failed', 'Bad Sort Parameters'),
  admin_audit_scope: e(400, 'validation_failed', 'Invalid query scope'),
  // multi-factor authentication (docs/mfa.md#errors), the original's statuses and wording
  mfa_factor_id: e(404, 'validation_failed', 'factor_id must be an UUID'),
  mfa_factor_not_found: e(404, 'mfa_factor_not_found', 'Factor not found'),
  mfa_challenge_not_found: e(422, 'mfa_factor_not_found', 'MFA factor with the provided challenge ID not found'),
  mfa_factor_type: e(400, 'validation_failed', 'factor_type needs to be totp, phone, or webauthn'),
  mfa_factor_name_conflict: e(422, 'mfa_factor_name_conflict', 'A factor with this friendly name for this user already exists'),
  too_many_enrolled_mfa_factors: e(
    422,
    'too_many_enrolled_mfa_factors',
    'Maximum number of verified factors reached, unenroll to continue',
  ),
  mfa_verified_factor_exists: e(
    422,
    'mfa_verified_factor_exists',
    'A verified phone factor already exists, unenroll the existing factor to continue',
  ),
  mfa_phone_factor_exists: e(422, 'mfa_verified_factor_exists', 'A phone factor with this number already exists for this user'),
  mfa_phone_required: e(400, 'validation_failed', 'Phone number required to enroll Phone factor'),
  mfa_code_required: e(400, 'validation_failed', 'Code needs to be non-empty'),
  // ours: the original has no bound and fails with a 500 (docs/mfa.md#post-factors)
  mfa_friendly_name_too_long: e(400, 'validation_failed', 'friendly_name must be 2000 bytes or less'),
  mfa_totp_uri_too_long: e(400, 'validation_failed', 'issuer is too long: the TOTP URI does not fit in a QR code'),
  insufficient_aal_enroll: e(403, 'insufficient_aal', 'AAL2 required to enroll a new factor'),
  insufficient_aal_unenroll: e(422, 'insufficient_aal', 'AAL2 required to unenroll verified factor'),
  insufficient_aal_user_update: e(401, 'insufficient_aal', 'AAL2 session is required to update email or password when MFA is enabled.'),
  mfa_ip_address_mismatch: e(422, 'mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.'),
  mfa_challenge_expired: e(
    422,
    'mfa_challenge_expired',
    'MFA challenge has expired, verify against another challenge or create a new challenge.',
  ),
  mfa_totp_verification_failed: e(422, 'mfa_verification_failed', 'Invalid TOTP code entered'),
  mfa_phone_verification_failed: e(422, 'mfa_verification_failed', 'Invalid MFA Phone code entered'),
  mfa_totp_enroll_not_enabled: e(422, 'mfa_totp_enroll_not_enabled', 'MFA enroll is disabled for TOTP'),
  mfa_totp_verify_not_enabled: e(422, 'mfa_totp_verify_not_enabled', 'MFA verification is disabled for TOTP'),
  mfa_phone_enroll_not_enabled: e(422, 'mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone'),
  mfa_phone_verify_not_enabled: e(422, 'mfa_phone_verify_not_enabled', 'MFA verification is disabled for Phone'),
  mfa_webauthn_enroll_not_enabled: e(422, 'mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn'),
  mfa_webauthn_verify_not_enabled: e(422, 'mfa_webauthn_verify_not_enabled', 'MFA verification is disabled for WebAuthn'),
  // passkeys and WebAuthn ceremonies (docs/passkeys.md#errors), the original's codes and messages
  passkey_disabled: e(404, 'passkey_disabled', 'Passkeys are disabled'),
  passkey_sso_user: e(422, 'validation_failed', 'SSO users cannot register passkeys'),
  passkey_insufficient_aal: e(403, 'insufficient_aal', 'AAL2 session is required to manage passkeys when MFA is enabled'),
  too_many_passkeys: e(422, 'too_many_passkeys', 'Maximum number of passkeys reached'),
  passkey_not_found: e(404, 'validation_failed', 'Passkey not found'),
  passkey_name_required: e(400, 'validation_failed', 'friendly_name is required'),
  passkey_name_too_long: e(400, 'validation_failed', 'friendly_name must be 120 characters or less'),
  challenge_id_required: e(400, 'validation_failed', 'challenge_id is required'),
  challenge_id_invalid: e(400, 'validation_failed', 'challenge_id must be a valid UUID'),
  credential_required: e(400, 'validation_failed', 'credential is required'),
  webauthn_challenge_not_found: e(400, 'webauthn_challenge_not_found', 'Challenge not found or already used'),
  webauthn_challenge_expired: e(400, 'webauthn_challenge_expired', 'Challenge has expired'),
  webauthn_response_invalid: e(400, 'webauthn_verification_failed', 'Invalid credential response'),
  webauthn_verification_failed: e(400, 'webauthn_verification_failed', 'Credential verification failed'),
  webauthn_credential_exists: e(422, 'webauthn_credential_exists', 'This credential is already registered'),
  passkey_email_not_confirmed: e(403, 'email_not_confirmed', 'Email not confirmed'),
  passkey_phone_not_confirmed: e(403, 'phone_not_confirmed', 'Phone not confirmed'),
  // the webauthn MFA factor type (docs/passkeys.md#webauthn-as-a-second-factor)
  mfa_webauthn_params_required: e(400, 'validation_failed', 'WebAuthn config required'),
  mfa_webauthn_type: e(400, 'validation_failed', 'WebAuthn type must be create or request'),
  mfa_webauthn_response_required: e(400, 'validation_failed', 'credential_response required'),
  mfa_webauthn_response_invalid: e(400, 'validation_failed', 'Invalid credential_response'),
  mfa_webauthn_verification_failed: e(422, 'mfa_verification_failed', 'WebAuthn credential verification failed'),
  // every path under /scim/v2 while EXPERIMENTAL_SCIM_ENABLED is off (docs/scim.md); SCIM's own refusals are
  // RFC 7644 bodies (scim/protocol.ts), not entries of this table
  scim_disabled: e(404, 'feature_disabled', 'SCIM server is disabled'),
  // the OAuth 2.1 server (docs/oauth-server.md#errors): the original's codes, statuses and messages
  oauth_server_disabled: e(404, 'feature_disabled', 'OAuth server is disabled'),
  oauth_bad_json: e(400, 'bad_json', 'Invalid JSON body'),
  oauth_consent_bad_json: e(400, 'bad_json', 'invalid JSON body'),
  oauth_client_invalid: e(400, 'validation_failed', 'Invalid request'),
  oauth_client_id_required: e(400, 'validation_failed', 'client_id is required'),
  oauth_client_id_format: e(400, 'validation_failed', 'invalid client_id format'),
  oauth_client_not_found: e(404, 'oauth_client_not_found', 'OAuth client not found'),
  oauth_client_no_changes: e(400, 'validation_failed', 'No fields provided for update'),
  oauth_public_client_secret: e(400, 'validation_failed', 'Cannot regenerate secret for public client'),
  oauth_dynamic_registration_disabled: e(403, 'oauth_dynamic_client_registration_disabled', 'Dynamic client registration is not enabled'),
  oauth_redirect_uri_required: e(400, 'validation_failed', 'redirect_uri is required'),
  oauth_authorize_client_format: e(400, 'oauth_client_not_found', 'invalid client_id format'),
  oauth_authorize_client_unknown: e(400, 'oauth_client_not_found', 'invalid client_id'),
  oauth_authorize_redirect_uri: e(400, 'validation_failed', 'invalid redirect_uri'),
  oauth_authorization_not_found: e(404, 'oauth_authorization_not_found', 'authorization not found'),
  oauth_authorization_not_pending: e(400, 'validation_failed', 'authorization request cannot be processed'),
  oauth_authorization_no_longer_pending: e(400, 'validation_failed', 'authorization request is no longer pending'),
  oauth_unauthorized_origin: e(400, 'validation_failed', 'unauthorized request origin'),
  oauth_consent_action: e(400, 'validation_failed', "action must be 'approve' or 'deny'"),
  oauth_client_credentials: e(400, 'invalid_credentials', 'Invalid client credentials'),
  oauth_grant_client_id_required: e(400, 'validation_failed', 'client_id query parameter is required'),
  oauth_consent_not_found: e(404, 'oauth_consent_not_found', 'No active grant found for this client'),
  // auth hooks (docs/hooks.md#errors): the original's codes, statuses and messages
  hook_timeout: e(422, 'hook_timeout', 'Failed to reach hook within maximum time of 5.000000 seconds'),
  hook_timeout_after_retry: e(422, 'hook_timeout_after_retry', 'Failed to reach hook after maximum retries'),
  hook_payload_over_size_limit: e(422, 'hook_payload_over_size_limit', 'Payload size exceeded size limit of 204800 bytes'),
  hook_payload_invalid_content_type: e(400, 'hook_payload_invalid_content_type', 'Invalid Content-Type: Missing Content-Type header'),
  hook_failed: e(500, 'unexpected_failure', 'Error running hook'),
  // the sign-up routes' answer to any failure of the after-user-created hook (hooks/after-user-created.ts)
  hook_after_sign_up_failed: e(500, 'unexpected_failure', 'Error invoking hook'),
  // a hook's own {"error": {"http_code", "message"}} with a status other than 500 (hooks/errors.ts)
  hook_error: e(400, 'unknown', 'Hook error'),
  password_verification_rejected: e(400, 'invalid_credentials', 'Further password verification attempts will be rejected.'),
  mfa_verification_rejected: e(403, 'mfa_verification_rejected', 'Further MFA verification attempts will be rejected.'),
} satisfies Record<string, ErrorEntry>;

export type ErrorName = keyof typeof ERRORS;
export type ErrorCode = (typeof ERRORS)[ErrorName]['code'];

export class ApiError extends Error {
  /** Retry-After in seconds; a 429 or 503 without one gets a default (http/render-error.ts). */
  retryAfterSeconds?: number;
  /** headers the answer carries besides the error's own, e.g. the Allow of a 405 */
  headers?: Record<string, string>;

  constructor(
    readonly status: number,
    readonly errorCode: ErrorCode,
    message: string,
    /** extra top-level body fields, e.g. weak_password: { reasons } */
    readonly extra?: Record<string, unknown>,
  ) {
    super(message);
  }

  /** Sets the seconds a client should wait before retrying (at least 1, whole seconds). */
  retryAfter(seconds: number): this {
    this.retryAfterSeconds = Math.max(1, Math.ceil(seconds));
    return this;
  }

  /**
   * Keeps the failure behind this answer: logged instead of the message, and, when it is an error the
   * operator's database raised on purpose, answered as such under the initial API version (http/render-error.ts).
   */
  causedBy(cause: unknown): this {
    this.cause = cause;
    return this;
  }

  /** Adds a header to the answer (http/render-error.ts). */
  withHeader(name: string, value: string): this {
    this.headers = { ...this.headers, [name]: value };
    return this;
  }
}

/** The error of a table entry; `msg` only where the message carries data. */
export function apiError(name: ErrorName, msg?: string, extra?: Record<string, unknown>): ApiError {
  const entry: ErrorEntry = ERRORS[name];
  const err = new ApiError(entry.status, entry.code as ErrorCode, msg ?? entry.msg, extra);
  return entry.retryAfter === undefined ? err : err.retryAfter(entry.retryAfter);
}
