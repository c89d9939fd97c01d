// A client as the admin and registration endpoints answer it, the original's members and order; empty
// descriptive fields are left out, as its omitempty does. The secret appears only where it was just made.
import type { OAuthClientRow } from '../../db/oauth-clients.js';
import { rfc3339Nano } from '../../db/timestamps.js';
import { isWebAddress } from './client-params.js';

export function clientJson(c: OAuthClientRow, secret?: string): Record<string, unknown> {
  const json: Record<string, unknown> = { client_id: c.id };
  if (secret) json.client_secret = secret;
  json.client_type = c.client_type;
  json.redirect_uris = splitList(c.redirect_uris);
  json.token_endpoint_auth_method = c.token_endpoint_auth_method;
  json.grant_types = splitList(c.grant_types);
  json.response_types = ['code'];
  if (c.client_name) json.client_name = c.client_name;
  if (c.client_uri) json.client_uri = c.client_uri;
  if (c.logo_uri) json.logo_uri = c.logo_uri;
  json.registration_type = c.registration_type;
  json.created_at = rfc3339Nano(c.created_at);
  json.updated_at = rfc3339Nano(c.updated_at);
  return json;
}

/**
 * The client as the consent page and the grants list show it: {id, name, uri, logo_uri}. An address no
 * registration may set now, kept by a client adopted from the original's database, is left out as if empty:
 * those pages are made by apps that trust it as a link (client-params.ts isWebAddress). Admins still see it.
 */
export function clientSummary(c: Pick<OAuthClientRow, 'id' | 'client_name' | 'client_uri' | 'logo_uri'>): Record<string, unknown> {
  const json: Record<string, unknown> = { id: c.id };
  if (c.client_name) json.name = c.client_name;
  if (c.client_uri && isWebAddress(c.client_uri)) json.uri = c.client_uri;
  if (c.logo_uri && isWebAddress(c.logo_uri)) json.logo_uri = c.logo_uri;
  return json;
}

export const splitList = (joined: string): string[] => (joined === '' ? [] : joined.split(','));
