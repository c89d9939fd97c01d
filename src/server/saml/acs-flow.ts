// Which flow a post to the ACS belongs to, from its RelayState (docs/sso-saml.md#the-flow), as the original
// tells them apart: a UUID (in any spelling its UUID library reads, the nil UUID being none) names an
// SP-initiated flow's relay state, which is taken (deleted) here so it works once, and must be younger than
// SAML_RELAY_STATE_VALIDITY_PERIOD; an empty RelayState or a URL is an IdP-initiated post, whose provider
// is the one the response's (not yet verified) Issuer names; anything else is refused.
import { apiError } from '../errors.js';
import { takeRelayState } from '../../db/saml-relay-states.js';
import { findSsoProviderByEntityId, findSsoProviderById, type SsoProviderRow } from '../../db/sso-providers.js';
import { parseXml, children, textOf, XmlProblem } from './xml.js';
import { NIL_UUID, readUuid } from '../uuid-text.js';
import type { AcsForm } from './acs-form.js';
import type { AppContext } from '../context.js';

export interface Started {
  provider: SsoProviderRow;
  /** the AuthnRequest ID the response must answer; null for an IdP-initiated post */
  requestId: string | null;
  redirectTo: string;
  /** the PKCE flow of the sign-in, if it is one */
  flowStateId: string | null;
}

/** The provider and request of this post, from its RelayState (REFERENCE: the original's three cases). */
export async function identifyFlow(ctx: AppContext, form: AcsForm): Promise<Started> {
  const { relayState, samlResponse } = form;
  const read = readUuid(relayState);
  const relayStateId = 'uuid' in read && read.uuid !== NIL_UUID ? read.uuid : null;
  if (relayStateId) {
    const row = await takeRelayState(ctx.db, relayStateId);
    if (!row) throw apiError('saml_relay_state_not_found');
    if (Date.now() - row.created_at.getTime() >= ctx.config.saml.relayStateValiditySeconds * 1000) {
      throw apiError('saml_relay_state_expired');
    }
    const provider = await findSsoProviderById(ctx.db, row.sso_provider_id);
    if (!provider) throw apiError('saml_relay_state_not_found');
    if (provider.disabled) throw apiError('sso_provider_disabled_for_domain');
    return { provider, requestId: row.request_id, redirectTo: row.redirect_to ?? '', flowStateId: row.flow_state_id };
  }
  if (relayState !== '' && !isRequestUri(relayState)) throw apiError('saml_relay_state_invalid');
  if (form.artifact) throw apiError('saml_artifact_unsupported');
  if (!samlResponse) throw apiError('saml_response_missing');
  const issuer = peekIssuer(samlResponse);
  const provider = await findSsoProviderByEntityId(ctx.db, issuer);
  if (!provider) throw apiError('saml_idp_not_found');
  if (provider.disabled) throw apiError('sso_provider_disabled_for_domain');
  return { provider, requestId: null, redirectTo: relayState, flowStateId: null };
}

/** An absolute URL or an absolute path, as Go's url.ParseRequestURI accepts. */
function isRequestUri(value: string): boolean {
  if (value.startsWith('/')) return true;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/** The (unverified) Issuer of a response: only used to pick the provider whose certificates then verify it. */
function peekIssuer(samlResponse: string): string {
  if (!/^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/.test(samlResponse)) throw apiError('saml_response_not_base64');
  let root;
  try {
    root = parseXml(Buffer.from(samlResponse, 'base64').toString('utf8')).documentElement!;
  } catch (err) {
    if (err instanceof XmlProblem) throw apiError('saml_response_not_xml');
    throw err;
  }
  if (root.localName !== 'Response') throw apiError('saml_response_not_xml');
  return textOf(children(root, 'Issuer')[0]);
}
