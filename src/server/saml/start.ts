// POST /sso (docs/sso-saml.md#the-flow): finds the provider by provider_id or email domain, keeps a relay
// state (its id is the RelayState, with the AuthnRequest's ID and the validated redirect_to) and, with a
// code_challenge, a PKCE flow; then answers the IdP URL carrying the signed AuthnRequest (HTTP-Redirect
// binding, signed with SAML_PRIVATE_KEY), as a 303 or as {url} with skip_http_redirect.
import { randomBytes } from 'node:crypto';
import { SAML } from '@node-saml/node-saml';
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { findSsoProviderByDomain, findSsoProviderById, type SsoProviderRow } from '../../db/sso-providers.js';
import { insertRelayState, relayStateProviderGone } from '../../db/saml-relay-states.js';
import { insertSsoFlowState } from '../../db/flow-state.js';
import { readPkceParams, type PkceParams } from '../verify/pkce-challenge.js';
import { parseIdpMetadata } from './idp-metadata.js';
import { NIL_UUID, readUuid } from '../uuid-text.js';
import { samlKeys } from './keys.js';
import { spUrls } from './sp.js';
import type { SsoBody } from './sso-body.js';
import type { ApiRequest } from '../http/types.js';
import type { AppContext } from '../context.js';

const PERSISTENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent';

export async function startSso(req: ApiRequest<SsoBody>, ctx: AppContext): Promise<{ url: string; skipRedirect: boolean }> {
  const body = req.body();
  const provider = await findProvider(ctx, body);
  if (provider.disabled) throw apiError('sso_provider_disabled');
  const pkce = ssoPkce(body);
  const redirectTo = ctx.redirect(body.redirect_to || undefined) ?? ctx.config.siteUrl;
  const idp = safeMetadata(provider);
  const requestId = `id-${randomBytes(20).toString('hex')}`;
  const relayState = await tx(
    ctx.db,
    async (c) => {
      const flowStateId = pkce ? await insertSsoFlowState(c, { ...pkce, referrer: redirectTo }) : null;
      return insertRelayState(c, { ssoProviderId: provider.id, requestId, redirectTo, flowStateId });
    },
    req.signal,
  ).catch((err: unknown) => {
    // Deleted since it was found: answered as a request made after the deletion is.
    if (relayStateProviderGone(err)) throw providerNotFound(body);
    throw err;
  });
  const sp = spUrls(ctx.config);
  const saml = new SAML({
    idpCert: (done) => done(null, idp.signingCerts),
    entryPoint: idp.ssoUrl,
    issuer: sp.entityId,
    callbackUrl: sp.acsUrl,
    privateKey: samlKeys(ctx.config).current.privateKeyPem,
    // RSA-SHA1, as the original's SAML library (crewjam/saml 0.4) signs its requests: IdP trusts set up for
    // the original (ADFS pins the algorithm) keep accepting them. Only what we send; responses are verified
    // with whatever their IdP signs (docs/sso-saml.md#keys).
    signatureAlgorithm: 'sha1',
    identifierFormat: provider.name_id_format || PERSISTENT,
    disableRequestedAuthnContext: true,
    generateUniqueId: () => requestId,
  });
  const url = await saml.getAuthorizeUrlAsync(relayState, undefined, {});
  return { url, skipRedirect: body.skip_http_redirect === true };
}

async function findProvider(ctx: AppContext, body: SsoBody): Promise<SsoProviderRow> {
  // The original decodes the body straight into a UUID, so a bad one fails the whole body's decoding; the nil
  // UUID means none.
  const read = body.provider_id === undefined || body.provider_id === null ? null : readUuid(body.provider_id);
  if (read && 'error' in read) throw apiError('bad_json', `Could not parse request body as JSON: ${read.error}`);
  const providerId = read && read.uuid !== NIL_UUID ? read.uuid : null;
  const domain = body.domain ?? '';
  if (providerId && domain) throw apiError('sso_provider_and_domain');
  if (!providerId && !domain) throw apiError('sso_provider_or_domain');
  const found = providerId ? await findSsoProviderById(ctx.db, providerId) : await findSsoProviderByDomain(ctx.db, domain);
  if (!found) throw providerNotFound(body);
  return found;
}

/** The 404 of a provider not found: by its id, or by the domain when the body names one instead. */
function providerNotFound(body: SsoBody) {
  return apiError(body.domain ? 'sso_domain_not_found' : 'sso_provider_not_found');
}

/**
 * The PKCE parameters of POST /sso. Here the original checks the challenge before the method, and refuses
 * an unknown method in words of its own ("Invalid code_challenge_method", where the email flows name it).
 */
function ssoPkce(body: SsoBody): PkceParams | null {
  const method = body.code_challenge_method ?? '';
  const known = ['s256', 'plain'].includes(method.toLowerCase());
  const pkce = readPkceParams(known || !method ? body : { ...body, code_challenge_method: 's256' });
  if (pkce && !known) throw apiError('pkce_method_unsupported', 'Invalid code_challenge_method');
  return pkce;
}

/** Stored metadata was checked when it was saved; one without a sign-in URL cannot start a flow. */
function safeMetadata(provider: SsoProviderRow) {
  const idp = parseIdpMetadata(provider.metadata_xml);
  if (!idp.ssoUrl) throw apiError('saml_metadata_no_idp', 'SAML Metadata does not name a SingleSignOnService');
  return idp;
}
