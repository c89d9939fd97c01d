// The body of POST and PUT /admin/sso/providers (docs/sso-saml.md#identity-providers), checked in the original's
// order: type, metadata source, metadata_url form, name_id_format; then the metadata itself is read.
import { apiError } from '../errors.js';
import { bodySchema } from '../http/validate.js';
import { parseStrictUrl } from '../http/strict-url.js';
import { fetchSamlMetadata, metadataFetchFailed } from './fetch-metadata.js';
import { parseIdpMetadata, type IdpMetadata } from './idp-metadata.js';
import type { AttributeMapping } from '../../db/sso-providers.js';
import { normalMapping } from './attribute-mapping.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { beforeDeadline } from '../http/request-budget.js';

export const providerBody = bodySchema({
  type: 'string',
  metadata_url: 'string',
  metadata_xml: 'string',
  domains: 'unknown',
  attribute_mapping: 'object',
  name_id_format: 'string',
  resource_id: 'string',
  disabled: 'boolean',
});
export type ProviderBody = ReturnType<typeof providerBody>;

export const NAME_ID_FORMATS = [
  'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
  'urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified',
];

export function checkProviderBody(body: ProviderBody, forUpdate: boolean): void {
  if (!forUpdate && body.type !== 'saml') throw apiError('sso_type_invalid');
  if (body.metadata_url && body.metadata_xml) throw apiError('sso_metadata_both');
  if (!forUpdate && !body.metadata_url && !body.metadata_xml) throw apiError('sso_metadata_missing');
  if (body.metadata_url) {
    const url = parseStrictUrl(body.metadata_url);
    if (!url) throw apiError('sso_metadata_url_invalid');
    if (url.protocol !== 'https:') throw apiError('sso_metadata_url_not_https');
  }
  if (body.name_id_format && !NAME_ID_FORMATS.includes(body.name_id_format)) {
    throw apiError('sso_name_id_format_invalid', `name_id_format must be unspecified or one of ${NAME_ID_FORMATS.join(', ')}`);
  }
  readDomains(body);
  readAttributeMapping(body);
}

/** domains: absent (null) leaves them as they are on update; an array of non-empty strings otherwise. */
export function readDomains(body: ProviderBody): string[] | null {
  const domains = body.domains;
  if (domains === undefined || domains === null) return null;
  if (!Array.isArray(domains) || !domains.every((d) => typeof d === 'string' && d.trim() !== '')) {
    throw apiError('sso_field_invalid', 'domains must be an array of domain names');
  }
  return [...new Set(domains.map((d: string) => d.trim().toLowerCase()))];
}

/**
 * attribute_mapping: {keys: {claim: {name?, names?, default?, array?}}}, stored as the original stores it
 * (saml/attribute-mapping.ts); null when absent or without keys, which on update leaves the stored mapping
 * as it is, as in the original.
 */
export function readAttributeMapping(body: ProviderBody): AttributeMapping | null {
  const mapping = body.attribute_mapping as AttributeMapping | null | undefined;
  if (!mapping) return null;
  const keys = mapping.keys;
  if (keys === undefined || keys === null) return null;
  if (typeof keys !== 'object' || Array.isArray(keys)) throw apiError('sso_field_invalid', 'attribute_mapping.keys must be an object');
  for (const [claim, rule] of Object.entries(keys)) {
    const ok =
      rule !== null &&
      typeof rule === 'object' &&
      (rule.name === undefined || rule.name === null || typeof rule.name === 'string') &&
      (rule.names === undefined || rule.names === null || (Array.isArray(rule.names) && rule.names.every((n) => typeof n === 'string'))) &&
      (rule.array === undefined || rule.array === null || typeof rule.array === 'boolean');
    if (!ok) throw apiError('sso_field_invalid', `attribute_mapping.keys.${claim} must be {name, names, default, array}`);
  }
  return normalMapping({ keys });
}

/**
 * The metadata of the body, fetched from metadata_url or taken from metadata_xml; null when neither is given.
 * The fetch's own bound (INTERNAL_HTTP_TIMEOUT) is as long as the request's deadline by default, so an IdP
 * that never answered raced it into the 504: it gives up before the deadline instead (http/request-budget.ts),
 * refused as an unreachable URL is. Half the time left at most: the provider is still to be written after it.
 */
export async function bodyMetadata(
  ctx: AppContext,
  req: Pick<ApiRequest, 'msLeft'>,
  body: ProviderBody,
): Promise<{ raw: string; parsed: IdpMetadata } | null> {
  let raw: string;
  const url = body.metadata_url;
  if (body.metadata_xml) raw = body.metadata_xml;
  else if (url) {
    const fetch = () => fetchSamlMetadata(url, ctx.config.external.httpTimeoutSeconds);
    raw = await beforeDeadline(req, fetch, () => metadataFetchFailed(url), 0.5);
  } else return null;
  return { raw, parsed: parseIdpMetadata(raw) };
}
