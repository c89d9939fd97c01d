// The body of POST and PUT /admin/custom-providers and its checks, in the original's order and words
// (docs/custom-providers.md#admin-api). Checks the original leaves to its table constraints (identifier
// format, lengths), which it then answers with a 500, are made here first and answered as 400s.
import { bodySchema } from '../http/validate.js';
import { apiError } from '../errors.js';
import { goQuoted } from '../go-quoted.js';

export const providerBody = bodySchema({
  provider_type: 'string',
  identifier: 'string',
  name: 'string',
  client_id: 'string',
  client_secret: 'string',
  acceptable_client_ids: 'unknown',
  scopes: 'unknown',
  pkce_enabled: 'boolean',
  attribute_mapping: 'object',
  custom_claims_allowlist: 'unknown',
  authorization_params: 'object',
  enabled: 'boolean',
  email_optional: 'boolean',
  issuer: 'string',
  discovery_url: 'string',
  skip_nonce_check: 'boolean',
  authorization_url: 'string',
  token_url: 'string',
  userinfo_url: 'string',
  jwks_uri: 'string',
});

export type ProviderBody = ReturnType<typeof providerBody>;

const invalid = (msg: string) => apiError('validation_failed', msg);

/** The stored identifier's shape (the table's check): custom:<lowercase letters, digits, '-' or ':'>, 2–50 characters. */
const IDENTIFIER = /^[a-z0-9][a-z0-9:-]{0,48}[a-z0-9]$/;

/** The `custom:` prefix every identifier in a path or a body carries. */
export function checkIdentifier(identifier: string): void {
  if (!identifier) throw invalid('identifier is required');
  if (!identifier.startsWith('custom:')) throw invalid(`identifier must start with 'custom:' prefix, e.g. 'custom:${identifier}'`);
}

/** POST: the fields every provider needs, then those of its type. */
export function checkRequired(body: ProviderBody, type: 'oauth2' | 'oidc'): void {
  checkIdentifier(body.identifier ?? '');
  if (!IDENTIFIER.test(body.identifier!)) {
    throw invalid("identifier must be 2 to 50 lowercase letters, digits, '-' or ':', starting and ending with a letter or digit");
  }
  if (!body.name) throw invalid('name is required');
  if (!body.client_id) throw invalid('client_id is required');
  if (!body.client_secret) throw invalid('client_secret is required');
  if (type === 'oidc' && !body.issuer) throw invalid('issuer is required for OIDC providers');
  if (type === 'oauth2') {
    for (const field of ['authorization_url', 'token_url', 'userinfo_url'] as const) {
      if (!body[field]) throw invalid(`${field} is required for OAuth2 providers`);
    }
  }
}

/** Lengths the table enforces, checked for any field a request sets. */
export function checkLengths(body: ProviderBody): void {
  if (body.name && [...body.name].length > 100) throw invalid('name must be at most 100 characters');
  if (body.client_id && [...body.client_id].length > 512) throw invalid('client_id must be at most 512 characters');
  for (const field of ['issuer', 'discovery_url', 'authorization_url', 'token_url', 'userinfo_url', 'jwks_uri'] as const) {
    if ((body[field]?.length ?? 0) > 2048) throw invalid(`${field} must be at most 2048 characters`);
  }
}

/** A list field: absent (null), or an array of strings. */
export function stringList(body: ProviderBody, field: 'scopes' | 'acceptable_client_ids' | 'custom_claims_allowlist'): string[] | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) throw invalid(`${field} must be an array of strings`);
  return value as string[];
}

// Parameters the service itself sets on the provider's authorization URL; `nonce` too, so that no stored
// value can pin it (the original's list).
const RESERVED_PARAMS = [
  'client_id',
  'client_secret',
  'redirect_uri',
  'response_type',
  'state',
  'code_challenge',
  'code_challenge_method',
  'code_verifier',
  'nonce',
];

export function checkAuthorizationParams(params: Record<string, unknown> | null | undefined): void {
  for (const [key, value] of Object.entries(params ?? {})) {
    if (RESERVED_PARAMS.includes(key)) throw invalid(`Cannot override reserved OAuth parameter: ${key}`);
    if (typeof value !== 'string') throw invalid(`Authorization parameter ${goQuoted(key)} must be a string`);
  }
}

// Fields of the user that no provider may set through attribute_mapping (the original's list).
const PROTECTED_TARGETS = [
  'id',
  'aud',
  'role',
  'app_metadata',
  'created_at',
  'updated_at',
  'confirmed_at',
  'email_confirmed_at',
  'phone_confirmed_at',
  'email_verified',
  'phone_verified',
  'banned_until',
  'is_super_admin',
];

export function checkAttributeMapping(mapping: Record<string, unknown> | null | undefined): void {
  for (const target of Object.keys(mapping ?? {})) {
    if (PROTECTED_TARGETS.includes(target)) throw invalid(`Cannot map to protected system field: ${target}`);
  }
}

export function checkClaimsAllowlist(list: string[] | null): void {
  if (list?.some((key) => !key.trim())) throw invalid('custom_claims_allowlist entries must be non-empty strings');
}

/** `openid` first when an OIDC provider's scopes lack it. */
export function withOpenid(scopes: string[]): string[] {
  return scopes.includes('openid') ? scopes : ['openid', ...scopes];
}
