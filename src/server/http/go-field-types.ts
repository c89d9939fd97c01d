// The Go type of each field of the original's request types (go-param-types.ts names the type per route),
// and the check its JSON decoder makes of them: a member of the wrong JSON kind (`{"email": 1}`) fails the
// whole body, 400 bad_json in Go's words, naming the struct, the field and its type ("json: cannot unmarshal
// number into Go struct field SignupParams.email of type string"). It comes where the original decodes the
// body, before any other check of the handler's (docs/api.md#conventions-for-every-endpoint).
//
// Only what Go checks at the top level is modelled: each field's kind, and the strings of a []string.
// Members no field takes are ignored, as Go ignores them; null is no error anywhere (Go leaves the field).
// A field's deeper shape (an SSO attribute mapping's, a WebAuthn credential's) is the route's own check.
import { apiError } from '../errors.js';
import { foldedName } from './field-names.js';
import { goJsonKind } from './go-json-kind.js';

/** A Go type as its decoder takes JSON: the kind it accepts, and for a list the kind of each entry. */
interface GoType {
  readonly name: string;
  readonly kind: 'string' | 'bool' | 'object' | 'array' | 'any';
  readonly entries?: GoType;
}

const STRING: GoType = { name: 'string', kind: 'string' };
const BOOL: GoType = { name: 'bool', kind: 'bool' };
const MAP: GoType = { name: 'map[string]interface {}', kind: 'object' };
const STRINGS: GoType = { name: '[]string', kind: 'array', entries: STRING };
/** uuid.UUID decodes a JSON string with UnmarshalText, whose own refusal of a non-UUID is the handler's. */
const UUID: GoType = { name: 'uuid.UUID', kind: 'string' };
const WEBAUTHN: GoType = { name: 'api.WebAuthnParams', kind: 'object' };
const SAML_ATTRIBUTE_MAPPING: GoType = { name: 'models.SAMLAttributeMapping', kind: 'object' };
/** json.RawMessage: any value, kept as sent. */
const RAW: GoType = { name: 'json.RawMessage', kind: 'any' };

const PKCE = { code_challenge: STRING, code_challenge_method: STRING };

/**
 * By Go type, as go-param-types.ts names it: each field's JSON name and type. Pointer fields (`*string`,
 * `*bool`) are named by what they point to, as Go's error names them.
 */
const FIELDS_BY_TYPE: Readonly<Record<string, Readonly<Record<string, GoType>>>> = {
  'api.SignupParams': { email: STRING, phone: STRING, password: STRING, data: MAP, channel: STRING, ...PKCE },
  'api.VerifyParams': { type: STRING, token: STRING, token_hash: STRING, email: STRING, phone: STRING, redirect_to: STRING },
  'api.UserUpdateParams': {
    email: STRING,
    password: STRING,
    current_password: STRING,
    nonce: STRING,
    data: MAP,
    app_metadata: MAP,
    phone: STRING,
    channel: STRING,
    ...PKCE,
  },
  'api.OtpParams': { email: STRING, phone: STRING, create_user: BOOL, data: MAP, channel: STRING, ...PKCE },
  'api.MagicLinkParams': { email: STRING, data: MAP, ...PKCE },
  'api.RecoverParams': { email: STRING, ...PKCE },
  'api.ResendConfirmationParams': { type: STRING, email: STRING, phone: STRING, ...PKCE },
  'api.InviteParams': { email: STRING, data: MAP },
  'api.SingleSignOnParams': { provider_id: UUID, domain: STRING, redirect_to: STRING, skip_http_redirect: BOOL, ...PKCE },
  'api.EnrollFactorParams': { friendly_name: STRING, factor_type: STRING, issuer: STRING, phone: STRING },
  'api.ChallengeFactorParams': { channel: STRING, webauthn: WEBAUTHN },
  'api.VerifyFactorParams': { challenge_id: UUID, code: STRING, webauthn: WEBAUTHN },
  'api.PasskeyAuthenticationVerifyParams': { challenge_id: STRING, credential: RAW },
  'api.PasskeyRegistrationVerifyParams': { challenge_id: STRING, credential: RAW },
  'api.PasskeyUpdateParams': { friendly_name: STRING },
  'api.AdminUserParams': {
    id: STRING,
    aud: STRING,
    role: STRING,
    email: STRING,
    phone: STRING,
    password: STRING,
    password_hash: STRING,
    email_confirm: BOOL,
    phone_confirm: BOOL,
    user_metadata: MAP,
    app_metadata: MAP,
    ban_duration: STRING,
  },
  'api.adminUserDeleteParams': { should_soft_delete: BOOL },
  'api.adminUserUpdateFactorParams': { friendly_name: STRING, phone: STRING },
  'api.GenerateLinkParams': { type: STRING, email: STRING, new_email: STRING, password: STRING, data: MAP, redirect_to: STRING },
  'api.CreateSSOProviderParams': {
    type: STRING,
    metadata_url: STRING,
    metadata_xml: STRING,
    domains: STRINGS,
    attribute_mapping: SAML_ATTRIBUTE_MAPPING,
    name_id_format: STRING,
    resource_id: STRING,
    disabled: BOOL,
  },
  'api.AdminCustomOAuthProviderParams': {
    provider_type: STRING,
    identifier: STRING,
    name: STRING,
    client_id: STRING,
    client_secret: STRING,
    acceptable_client_ids: STRINGS,
    scopes: STRINGS,
    pkce_enabled: BOOL,
    attribute_mapping: MAP,
    custom_claims_allowlist: STRINGS,
    authorization_params: MAP,
    enabled: BOOL,
    email_optional: BOOL,
    issuer: STRING,
    discovery_url: STRING,
    skip_nonce_check: BOOL,
    authorization_url: STRING,
    token_url: STRING,
    userinfo_url: STRING,
    jwks_uri: STRING,
  },
  'api.PasswordGrantParams': { email: STRING, phone: STRING, password: STRING },
  'api.RefreshTokenGrantParams': { refresh_token: STRING },
  'api.PKCEGrantParams': { auth_code: STRING, code_verifier: STRING },
  'api.IdTokenGrantParams': {
    id_token: STRING,
    access_token: STRING,
    nonce: STRING,
    provider: STRING,
    client_id: STRING,
    issuer: STRING,
    link_identity: BOOL,
  },
  'api.Web3GrantParams': { message: STRING, signature: STRING, chain: STRING },
};

/** Each type's fields by folded name: Go's decoder matches a member to a field exactly, else ignoring case. */
const FOLDED: ReadonlyMap<string, ReadonlyMap<string, [string, GoType]>> = new Map(
  Object.entries(FIELDS_BY_TYPE).map(([type, fields]) => [
    type,
    new Map(Object.entries(fields).map(([name, goType]) => [foldedName(name), [name, goType]])),
  ]),
);

/**
 * Throws the original's 400 bad_json when `body` cannot decode into `goParams`: the first member, in the
 * body's order, whose value (or, in a list, an entry's) is of a kind its field's type does not take.
 */
export function assertDecodesAsGo(body: Record<string, unknown>, goParams: string | undefined): void {
  if (goParams === undefined) return;
  const fields = FOLDED.get(goParams);
  if (fields === undefined) return;
  for (const member in body) {
    const field = fields.get(foldedName(member));
    if (field === undefined) continue;
    const [name, goType] = field;
    const problem = mismatch(body[member], goType);
    if (problem === null) continue;
    const struct = goParams.slice(goParams.indexOf('.') + 1); // Go names the struct without its package
    throw apiError(
      'bad_json',
      `Could not parse request body as JSON: json: cannot unmarshal ${problem.kind} into Go struct field ${struct}.${name} of type ${problem.type}`,
    );
  }
}

function mismatch(value: unknown, goType: GoType): { kind: string; type: string } | null {
  if (value === null || goType.kind === 'any') return null;
  const kind = goJsonKind(value);
  if (kind !== goType.kind) return { kind, type: goType.name };
  if (goType.entries === undefined) return null;
  for (const entry of value as unknown[]) {
    const problem = mismatch(entry, goType.entries);
    if (problem !== null) return problem;
  }
  return null;
}
