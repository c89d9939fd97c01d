// The bodies of client registration (POST /admin/oauth/clients, POST /oauth/clients/register) and update
// (PUT /admin/oauth/clients/{client_id}), checked in the original's order with its messages
// (docs/oauth-server.md#clients). A field of the wrong JSON type is the original's "Invalid JSON body".
import { apiError } from '../errors.js';
import type { JsonObject } from '../http/types.js';
import { redirectUriProblem } from './redirect-uri.js';
import { parsesAsRequestUri, uriParts } from './uri-parts.js';
import { fieldNames } from '../http/field-names.js';
import { withFields } from '../http/validate.js';

export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
export type ClientType = 'public' | 'confidential';

export interface RegisterParams {
  redirect_uris: string[];
  client_type: string;
  token_endpoint_auth_method: string;
  grant_types: string[];
  client_name: string;
  client_uri: string;
  logo_uri: string;
}

export type UpdateParams = Partial<Omit<RegisterParams, 'client_type'>>;

const invalid = (msg: string) => apiError('oauth_client_invalid', msg);

function stringField(body: JsonObject, key: string): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw apiError('oauth_bad_json');
  return v;
}

function listField(body: JsonObject, key: string): string[] | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw apiError('oauth_bad_json');
  return v as string[];
}

const REGISTER_FIELDS = [
  'redirect_uris',
  'client_type',
  'token_endpoint_auth_method',
  'grant_types',
  'client_name',
  'client_uri',
  'logo_uri',
];

/** The registration body's check (the route's schema): each field of its JSON type, else bad_json. */
export const readRegisterParams = withFields(fieldNames(REGISTER_FIELDS), (body): RegisterParams => {
  return {
    redirect_uris: listField(body, 'redirect_uris') ?? [],
    client_type: stringField(body, 'client_type') ?? '',
    token_endpoint_auth_method: stringField(body, 'token_endpoint_auth_method') ?? '',
    grant_types: listField(body, 'grant_types') ?? [],
    client_name: stringField(body, 'client_name') ?? '',
    client_uri: stringField(body, 'client_uri') ?? '',
    logo_uri: stringField(body, 'logo_uri') ?? '',
  };
});

/** The update body's check (the route's schema): only the fields present; null when none is (the original's "No fields provided for update"). */
export const readUpdateParams = withFields(fieldNames(REGISTER_FIELDS), (body): UpdateParams | null => {
  const p: UpdateParams = {};
  const uris = listField(body, 'redirect_uris');
  if (uris) p.redirect_uris = uris;
  const grants = listField(body, 'grant_types');
  if (grants) p.grant_types = grants;
  for (const key of ['client_name', 'client_uri', 'logo_uri', 'token_endpoint_auth_method'] as const) {
    const v = stringField(body, key);
    if (v !== undefined) p[key] = v;
  }
  return Object.keys(p).length === 0 ? null : p;
});

export function checkRedirectUris(uris: string[]): void {
  if (uris.length === 0) throw invalid('redirect_uris cannot be empty');
  if (uris.length > 10) throw invalid('redirect_uris cannot exceed 10 items');
  for (const uri of uris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw invalid(`invalid redirect_uri '${uri}': ${problem}`);
  }
}

export function checkGrantTypes(grants: string[]): void {
  if (grants.length === 0) throw invalid('grant_types cannot be empty');
  if (grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    throw invalid("grant_types must only contain 'authorization_code' and/or 'refresh_token'");
  }
}

/** The original counts these limits in UTF-8 bytes, whatever its messages say ("characters"). */
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

export function checkDescriptive(p: Pick<UpdateParams, 'client_name' | 'client_uri' | 'logo_uri'>): void {
  if (p.client_name !== undefined && bytes(p.client_name) > 1024) throw invalid('client_name cannot exceed 1024 characters');
  for (const key of ['client_uri', 'logo_uri'] as const) {
    const uri = p[key];
    if (!uri) continue;
    if (bytes(uri) > 2048) throw invalid(`${key} cannot exceed 2048 characters`);
    if (!parsesAsRequestUri(uri)) throw invalid(`${key} must be a valid URL`);
    if (!isWebAddress(uri)) throw invalid(`${key} must be an http or https URL`);
  }
}

/**
 * A client_uri or logo_uri fit to show: http, https, or no scheme. They are shown as a link and an image on
 * the consent page and in the user's grants, where a `javascript:` or `data:` address would run on the
 * operator's origin, where the user's session lives. The original takes any scheme (docs/oauth-server.md#departures),
 * so a client adopted from its database may hold one: client-json.ts leaves those out of what users see.
 */
export function isWebAddress(uri: string): boolean {
  const scheme = uriParts(uri)?.scheme ?? '';
  return scheme === '' || scheme === 'https' || scheme === 'http';
}

export const isAuthMethod = (m: string): m is AuthMethod => (AUTH_METHODS as readonly string[]).includes(m);

/** The client type an auth method implies: none is public, the secret methods confidential. */
export const typeOfMethod = (m: string): ClientType => (m === 'none' ? 'public' : 'confidential');

/** Checks a registration and decides its client type and auth method (defaults: confidential, client_secret_basic). */
export function checkRegistration(p: RegisterParams): { clientType: ClientType; authMethod: AuthMethod } {
  if (p.redirect_uris.length === 0) throw invalid('redirect_uris is required');
  checkRedirectUris(p.redirect_uris);
  if (p.grant_types.length > 0) checkGrantTypes(p.grant_types);
  checkDescriptive(p);
  if (p.client_type !== '' && p.client_type !== 'public' && p.client_type !== 'confidential') {
    throw invalid("client_type must be 'public' or 'confidential'");
  }
  if (p.token_endpoint_auth_method !== '' && !isAuthMethod(p.token_endpoint_auth_method)) {
    throw invalid(`token_endpoint_auth_method must be one of: [${AUTH_METHODS.join(' ')}]`);
  }
  const method = p.token_endpoint_auth_method;
  if (p.client_type !== '' && method !== '' && typeOfMethod(method) !== p.client_type) {
    throw invalid(
      `client_type '${p.client_type}' is inconsistent with token_endpoint_auth_method '${method}' (expected client_type '${typeOfMethod(method)}')`,
    );
  }
  const clientType: ClientType = p.client_type !== '' ? p.client_type : method !== '' ? typeOfMethod(method) : 'confidential';
  const authMethod: AuthMethod = isAuthMethod(method) ? method : clientType === 'public' ? 'none' : 'client_secret_basic';
  return { clientType, authMethod };
}

/** Checks an update against the client's (fixed) type. */
export function checkUpdate(p: UpdateParams, clientType: ClientType): void {
  if (p.redirect_uris) checkRedirectUris(p.redirect_uris);
  if (p.grant_types) checkGrantTypes(p.grant_types);
  checkDescriptive(p);
  const method = p.token_endpoint_auth_method;
  if (method === undefined) return;
  if (!isAuthMethod(method)) throw invalid(`invalid token_endpoint_auth_method: must be one of [${AUTH_METHODS.join(' ')}]`);
  if (typeOfMethod(method) !== clientType) {
    const valid = clientType === 'public' ? '[none]' : '[client_secret_basic client_secret_post]';
    throw invalid(`token_endpoint_auth_method '${method}' is not valid for client_type '${clientType}'; valid methods: ${valid}`);
  }
}
