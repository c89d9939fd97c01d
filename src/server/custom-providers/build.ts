// The row a create or an update writes (docs/custom-providers.md#admin-api): a create fills every field
// from the body with the original's defaults; an update changes only what the body sets (an empty string
// or an absent field leaves the stored value), and never the type or the identifier. URLs are checked
// (url-check.ts) and, when an OIDC provider's issuer or discovery URL is sent, its discovery document is
// fetched again. The client secret is sealed for the row (mfa/encryption.ts).
import { randomUUID } from 'node:crypto';
import type { CustomProviderFields, CustomProviderRow, CustomProviderType } from '../../db/custom-oauth-providers.js';
import type { SecretBox } from '../mfa/encryption.js';
import { checkProviderUrl } from './url-check.js';
import { discoveryFailed, discoveryUrlOf, fetchDiscovery } from './discovery.js';
import { publicConnections } from './public-connections.js';
import { stringList, withOpenid, type ProviderBody } from './params.js';
import { beforeDeadline } from '../http/request-budget.js';
import type { ApiRequest } from '../http/types.js';

export interface BuildOptions {
  allowPrivateUrls: boolean;
  box: SecretBox;
  /** the admin request: the discovery gives up before its deadline (rediscover) */
  request: Pick<ApiRequest, 'msLeft'>;
}

const URL_FIELDS = { oidc: ['issuer', 'discovery_url'], oauth2: ['authorization_url', 'token_url', 'userinfo_url', 'jwks_uri'] } as const;

/** A create's URLs, checked before anything else is looked up (the original answers a bad URL before a taken identifier). */
export async function checkNewProviderUrls(body: ProviderBody, type: CustomProviderType, o: BuildOptions): Promise<void> {
  for (const field of URL_FIELDS[type]) if (body[field]) await checkProviderUrl(body[field], o.allowPrivateUrls);
}

/** The row of a create whose URLs checkNewProviderUrls passed. */
export async function newProvider(body: ProviderBody, type: CustomProviderType, o: BuildOptions): Promise<CustomProviderFields> {
  const id = randomUUID();
  const scopes = stringList(body, 'scopes') ?? [];
  const oidc = type === 'oidc';
  const fields: CustomProviderFields = {
    id,
    provider_type: type,
    identifier: body.identifier!,
    name: body.name!,
    client_id: body.client_id!,
    client_secret: o.box.sealOrClear(id, body.client_secret!),
    acceptable_client_ids: stringList(body, 'acceptable_client_ids') ?? [],
    scopes: oidc ? withOpenid(scopes) : scopes,
    pkce_enabled: body.pkce_enabled ?? true,
    attribute_mapping: body.attribute_mapping ?? {},
    authorization_params: body.authorization_params ?? {},
    enabled: body.enabled ?? true,
    email_optional: body.email_optional ?? false,
    issuer: oidc ? body.issuer! : null,
    discovery_url: oidc ? body.discovery_url || null : null,
    skip_nonce_check: oidc ? (body.skip_nonce_check ?? false) : false,
    cached_discovery: null,
    discovery_cached_at: null,
    authorization_url: oidc ? null : body.authorization_url!,
    token_url: oidc ? null : body.token_url!,
    userinfo_url: oidc ? null : body.userinfo_url!,
    jwks_uri: oidc ? null : body.jwks_uri || null,
    custom_claims_allowlist: stringList(body, 'custom_claims_allowlist') ?? [],
  };
  if (oidc) await rediscover(fields, o);
  return fields;
}

export async function changedProvider(row: CustomProviderRow, body: ProviderBody, o: BuildOptions): Promise<CustomProviderFields> {
  const { created_at, updated_at, ...p } = row;
  if (body.name) p.name = body.name;
  if (body.client_id) p.client_id = body.client_id;
  p.acceptable_client_ids = stringList(body, 'acceptable_client_ids') ?? p.acceptable_client_ids;
  const scopes = stringList(body, 'scopes');
  if (scopes) p.scopes = p.provider_type === 'oidc' ? withOpenid(scopes) : scopes;
  p.pkce_enabled = body.pkce_enabled ?? p.pkce_enabled;
  p.attribute_mapping = body.attribute_mapping ?? p.attribute_mapping;
  p.custom_claims_allowlist = stringList(body, 'custom_claims_allowlist') ?? p.custom_claims_allowlist;
  p.authorization_params = body.authorization_params ?? p.authorization_params;
  p.enabled = body.enabled ?? p.enabled;
  p.email_optional = body.email_optional ?? p.email_optional;
  for (const field of URL_FIELDS[p.provider_type]) {
    const value = body[field];
    if (!value) continue;
    await checkProviderUrl(value, o.allowPrivateUrls);
    p[field] = value;
  }
  if (p.provider_type === 'oidc') {
    p.skip_nonce_check = body.skip_nonce_check ?? p.skip_nonce_check;
    // A discovery_url sent at all, even empty (which leaves the stored one), fetches the document again, as in
    // the original: the way to pick up an issuer's changed endpoints without changing anything else.
    if (body.issuer || (body.discovery_url !== undefined && body.discovery_url !== null)) await rediscover(p, o);
  }
  if (body.client_secret) p.client_secret = o.box.sealOrClear(p.id, body.client_secret);
  return p;
}

/** The discovery document, whose endpoints the service will call, held to the same URL rules as the operator's URLs. */
async function rediscover(p: CustomProviderFields, o: BuildOptions): Promise<void> {
  const url = discoveryUrlOf(p.issuer!, p.discovery_url);
  const discover = async () => {
    const doc = await fetchDiscovery(url, p.issuer!, o.allowPrivateUrls ? undefined : publicConnections);
    for (const field of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri']) {
      // An empty one names no endpoint (the required ones were refused as missing already): the optional
      // userinfo_endpoint may be "", which the original reads as absent, as endpointsOf (module.ts) does.
      if (typeof doc[field] === 'string' && doc[field]) await checkProviderUrl(doc[field], o.allowPrivateUrls);
    }
    return doc;
  };
  // The fetch's own bound (10 s) is as long as the request's default deadline: an issuer that never answered
  // raced it into the 504. Refused as an unreachable document is, with half the time left at most, since the
  // row is still to be written (http/request-budget.ts).
  p.cached_discovery = await beforeDeadline(o.request, discover, () => discoveryFailed(url, 'no answer before the request deadline'), 0.5);
  p.discovery_cached_at = new Date();
}
