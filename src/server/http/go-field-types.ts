// The Go type of each field of the original's request types (go-param-types.ts names the type per route),
// and of the OIDC discovery documents it decodes with a request's rules (a custom provider's,
// custom-providers/discovery.ts; a built-in provider's, providers/discovery-decoding.ts), and the check its
// JSON decoder makes of them: a member of the wrong JSON kind (`{"email": 1}`) fails the whole body, 400
// bad_json in Go's words, naming the struct, the field and its type ("json: cannot unmarshal number into Go
// struct field SignupParams.email of type string"). It comes where the original decodes the body, before any
// other check of the handler's (docs/api.md#conventions-for-every-endpoint).
//
// Nested types are walked as Go walks them: a struct's members matched to its fields (exactly, else
// ignoring case), a map's values, a list's entries; an error names the innermost struct and the field's
// whole path ("SAMLAttribute.attribute_mapping.keys.name"), a map's keys and a list's indexes not in it.
// Members no field takes are ignored, as Go ignores them; null is no error anywhere; json.RawMessage and
// interface{} take anything.
//
// What a null does to a field depends on its Go type, which is why pointer fields are marked here: it
// empties a pointer, map, slice or interface{} (and a json.RawMessage holds the null itself), and leaves a
// string, bool, struct or uuid.UUID as it was. So a later null member of a field (`{"password": "x",
// "Password": null}`) undoes the earlier one for some fields and not others (field-names.ts).
import { apiError } from '../errors.js';
import { fieldNames, foldedName, underFieldNames, type FieldNames } from './field-names.js';
import { goJsonKind } from './go-json-kind.js';

/** A Go type as its decoder takes JSON: the kind it accepts, and what it holds. */
interface GoType {
  readonly name: string;
  readonly kind: 'string' | 'bool' | 'object' | 'array' | 'any';
  /** a list's entries */
  readonly entries?: GoType;
  /** a map's values */
  readonly values?: GoType;
  /** a struct's fields by folded JSON name: the declared name and its type */
  readonly fields?: ReadonlyMap<string, readonly [string, GoType]>;
  /** a struct's name without its package, as Go's errors name it */
  readonly bare?: string;
  /** a JSON null empties it (a pointer, map, slice, interface{} or json.RawMessage) rather than leaving it */
  readonly nulled?: true;
}

/** `*T`: decoded as T is, but emptied by null. */
const pointer = (type: GoType): GoType => ({ ...type, nulled: true });

function struct(name: string, fields: Readonly<Record<string, GoType>>): GoType {
  return {
    name,
    kind: 'object',
    bare: name.slice(name.indexOf('.') + 1),
    fields: new Map(Object.entries(fields).map(([field, type]) => [foldedName(field), [field, type]])),
  };
}

const STRING: GoType = { name: 'string', kind: 'string' };
const BOOL: GoType = { name: 'bool', kind: 'bool' };
const MAP: GoType = { name: 'map[string]interface {}', kind: 'object', nulled: true };
const STRINGS: GoType = { name: '[]string', kind: 'array', entries: STRING, nulled: true };
/** uuid.UUID decodes a JSON string with UnmarshalText, whose own refusal of a non-UUID is the handler's. */
const UUID: GoType = { name: 'uuid.UUID', kind: 'string' };
/** json.RawMessage (any value, kept as sent) and interface{} take anything. */
const RAW: GoType = { name: 'json.RawMessage', kind: 'any', nulled: true };
const ANY: GoType = { name: 'interface {}', kind: 'any', nulled: true };
const WEBAUTHN = struct('api.WebAuthnParams', { type: STRING, credential_response: RAW });
const SAML_ATTRIBUTE = struct('models.SAMLAttribute', { name: STRING, names: STRINGS, default: ANY, array: BOOL });
const SAML_ATTRIBUTE_MAPPING = struct('models.SAMLAttributeMapping', {
  keys: { name: 'map[string]models.SAMLAttribute', kind: 'object', values: SAML_ATTRIBUTE, nulled: true },
});

const PKCE = { code_challenge: STRING, code_challenge_method: STRING };

/**
 * By Go type, as go-param-types.ts names it: each field's JSON name and type. Pointer fields (`*string`,
 * `*bool`) are named by what they point to, as Go's error names them, and marked with pointer().
 */
const FIELDS_BY_TYPE: Readonly<Record<string, Readonly<Record<string, GoType>>>> = {
  'api.SignupParams': { email: STRING, phone: STRING, password: STRING, data: MAP, channel: STRING, ...PKCE },
  'api.VerifyParams': { type: STRING, token: STRING, token_hash: STRING, email: STRING, phone: STRING, redirect_to: STRING },
  'api.UserUpdateParams': {
    email: STRING,
    password: pointer(STRING),
    current_password: pointer(STRING),
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
  'api.SingleSignOnParams': { provider_id: UUID, domain: STRING, redirect_to: STRING, skip_http_redirect: pointer(BOOL), ...PKCE },
  'api.EnrollFactorParams': { friendly_name: STRING, factor_type: STRING, issuer: STRING, phone: STRING },
  'api.ChallengeFactorParams': { channel: STRING, webauthn: pointer(WEBAUTHN) },
  'api.VerifyFactorParams': { challenge_id: UUID, code: STRING, webauthn: pointer(WEBAUTHN) },
  'api.PasskeyAuthenticationVerifyParams': { challenge_id: STRING, credential: RAW },
  'api.PasskeyRegistrationVerifyParams': { challenge_id: STRING, credential: RAW },
  'api.PasskeyUpdateParams': { friendly_name: STRING },
  'api.AdminUserParams': {
    id: STRING,
    aud: STRING,
    role: STRING,
    email: STRING,
    phone: STRING,
    password: pointer(STRING),
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
    resource_id: pointer(STRING),
    disabled: pointer(BOOL),
  },
  'api.AdminCustomOAuthProviderParams': {
    provider_type: STRING,
    identifier: STRING,
    name: STRING,
    client_id: STRING,
    client_secret: STRING,
    acceptable_client_ids: STRINGS,
    scopes: STRINGS,
    pkce_enabled: pointer(BOOL),
    attribute_mapping: MAP,
    custom_claims_allowlist: STRINGS,
    authorization_params: MAP,
    enabled: pointer(BOOL),
    email_optional: pointer(BOOL),
    issuer: STRING,
    discovery_url: pointer(STRING),
    skip_nonce_check: pointer(BOOL),
    authorization_url: STRING,
    token_url: STRING,
    userinfo_url: STRING,
    jwks_uri: pointer(STRING),
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
  // The captcha check's own decoding of the body, before the handler's (auth/captcha-guard.ts).
  'api.captchaRequest': { gotrue_meta_security: struct('api.captchaSecurity', { captcha_token: STRING }) },
  // Not a request: an OIDC provider's discovery document, decoded when a custom provider is saved.
  'utilities.OIDCDiscoveryDocument': {
    issuer: STRING,
    authorization_endpoint: STRING,
    token_endpoint: STRING,
    userinfo_endpoint: STRING,
    jwks_uri: STRING,
    scopes_supported: STRINGS,
    response_types_supported: STRINGS,
    grant_types_supported: STRINGS,
    subject_types_supported: STRINGS,
    id_token_signing_alg_values_supported: STRINGS,
  },
  // Not a request either: the discovery document of a built-in OIDC provider (and of an issuer the
  // id_token grant trusts), as the original's OIDC library decodes it (providers/discovery-decoding.ts).
  'oidc.providerJSON': {
    issuer: STRING,
    authorization_endpoint: STRING,
    token_endpoint: STRING,
    device_authorization_endpoint: STRING,
    jwks_uri: STRING,
    userinfo_endpoint: STRING,
    id_token_signing_alg_values_supported: STRINGS,
  },
};

const STRUCTS: ReadonlyMap<string, GoType> = new Map(Object.entries(FIELDS_BY_TYPE).map(([type, fields]) => [type, struct(type, fields)]));

/**
 * Throws the original's 400 bad_json when `body` cannot decode into `goParams`: the first member, in the
 * body's order and depth first, whose value is of a kind its field's type does not take.
 */
export function assertDecodesAsGo(body: Record<string, unknown>, goParams: string | undefined): void {
  const problem = goDecodeProblem(body, goParams);
  if (problem === null) return;
  throw apiError('bad_json', `Could not parse request body as JSON: ${problem}`);
}

/**
 * Go's words for why `value` (any JSON value) cannot decode into the struct `goType`, or null when it can
 * or the type is not known here: the first member, in order and depth first, of a kind its field does not take.
 */
export function goDecodeProblem(value: unknown, goType: string | undefined): string | null {
  const type = goType === undefined ? undefined : STRUCTS.get(goType);
  return type === undefined ? null : mismatch(value, type, '', []);
}

/**
 * Go's words for the first value under `value` its type does not take, or null. `struct` is the innermost
 * struct whose field is being decoded (Go names it bare) and `path` that field's path, one array pushed and
 * popped on the way down: the common body, which decodes, allocates nothing here.
 */
function mismatch(value: unknown, type: GoType, struct: string, path: string[]): string | null {
  if (value === null || type.kind === 'any') return null;
  const kind = goJsonKind(value);
  if (kind !== type.kind) {
    const into = path.length > 0 ? `Go struct field ${struct}.${path.join('.')}` : 'Go value';
    return `json: cannot unmarshal ${kind} into ${into} of type ${type.name}`;
  }
  if (type.entries) return firstOf(value as unknown[], type.entries, struct, path);
  if (type.values) return firstOf(Object.values(value as object), type.values, struct, path);
  if (!type.fields) return null;
  const members = value as Record<string, unknown>;
  for (const member in members) {
    // Declared names are lower case, so an exact match needs no folding.
    const field = type.fields.get(member) ?? type.fields.get(foldedName(member));
    if (field === undefined) continue;
    path.push(field[0]);
    const problem = mismatch(members[member], field[1], type.bare!, path);
    path.pop();
    if (problem !== null) return problem;
  }
  return null;
}

function firstOf(values: unknown[], type: GoType, struct: string, path: string[]): string | null {
  for (const value of values) {
    const problem = mismatch(value, type, struct, path);
    if (problem !== null) return problem;
  }
  return null;
}

const NONE: ReadonlySet<string> = new Set();
const NULLED: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(FIELDS_BY_TYPE).map(([type, fields]) => [type, new Set(Object.keys(fields).filter((field) => fields[field].nulled))]),
);

/**
 * The declared names of the fields of `goParams` that a JSON null empties (pointers, maps, slices...), so
 * that a later null member of one undoes an earlier value (field-names.ts); none for a type not known here.
 */
export function fieldsNullEmpties(goParams: string | undefined): ReadonlySet<string> {
  return (goParams === undefined ? undefined : NULLED.get(goParams)) ?? NONE;
}

const NAMES: ReadonlyMap<string, FieldNames> = new Map(
  Object.entries(FIELDS_BY_TYPE).map(([type, fields]) => [type, fieldNames(Object.keys(fields))]),
);

/**
 * A document that decodes as `goType` (goDecodeProblem found nothing) with each member its struct declares
 * under the field's own name, whatever its spelling, as Go's decoder matches names (field-names.ts); other
 * members are kept as they are.
 */
export function underGoFieldNames(doc: Record<string, unknown>, goType: string): Record<string, unknown> {
  const names = NAMES.get(goType);
  return names === undefined ? doc : underFieldNames(doc, names, fieldsNullEmpties(goType));
}
