// POST /sso/saml/acs (docs/sso-saml.md#the-flow): the IdP's browser post of SAMLResponse and RelayState.
// A UUID RelayState is an SP-initiated flow: its relay state is taken (deleted) at once, so it works once,
// and must be younger than SAML_RELAY_STATE_VALIDITY_PERIOD. An empty or URL RelayState is an
// IdP-initiated flow: the provider is the one whose entity ID issued the response. The response is
// verified (saml/verify-response.ts) with no transaction open; then one transaction finds or creates the
// user and issues the session (or the PKCE code). Every refusal is a 303 to SITE_URL carrying the error,
// as the original answers.
import { ApiError, apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { takeRelayState } from '../../db/saml-relay-states.js';
import { findSsoProviderByEntityId, findSsoProviderById, type SsoProviderRow } from '../../db/sso-providers.js';
import { finishOAuthFlowState } from '../../db/flow-state.js';
import { callbackParams } from '../oauth/callback.js';
import { stateError, codeRedirect } from '../oauth/redirects.js';
import { issueSession } from '../sessions/issue.js';
import { actorOf } from '../users/actor.js';
import { parseXml, children, textOf, XmlProblem } from './xml.js';
import { freshMetadata } from './metadata-refresh.js';
import { verifyResponse, AssertionRejected } from './verify-response.js';
import { readAssertion } from './assertion.js';
import { samlKeys } from './keys.js';
import { spUrls } from './sp.js';
import { signInSsoUser, ssoClaims } from './sign-in-user.js';
import { tokenFragmentRedirect } from './redirects.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { AppContext } from '../context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Started {
  provider: SsoProviderRow;
  requestId: string | null;
  redirectTo: string;
  flowStateId: string | null;
}

export async function handleAcs(req: ApiRequest, ctx: AppContext): Promise<ApiResponse> {
  try {
    return await consume(req, ctx);
  } catch (err) {
    if (err instanceof ApiError) return stateError(ctx.config.siteUrl, err);
    ctx.log.error({ err, requestId: req.requestId }, 'SAML ACS failed');
    return stateError(ctx.config.siteUrl, apiError('unexpected_failure'));
  }
}

async function consume(req: ApiRequest, ctx: AppContext): Promise<ApiResponse> {
  const params = callbackParams(req);
  const samlResponse = params.get('SAMLResponse') ?? '';
  const started = await identifyFlow(ctx, params, samlResponse);
  const provider = started.provider;
  const idp = await freshMetadata(ctx, provider);
  const keys = samlKeys(ctx.config);
  const verify = (key: typeof keys.current | null) =>
    verifyResponse(samlResponse, {
      idp,
      sp: spUrls(ctx.config),
      requestId: started.requestId,
      decryptionKey: ctx.config.saml.allowEncryptedAssertions ? key : null,
    });
  let profile;
  try {
    profile = await verify(keys.current).catch((err: unknown) => {
      // During a key rotation an IdP may still encrypt to the other key (docs/sso-saml.md#keys).
      if (err instanceof AssertionRejected && ctx.config.saml.allowEncryptedAssertions && keys.next) return verify(keys.next);
      throw err;
    });
  } catch (err) {
    if (!(err instanceof AssertionRejected)) throw err;
    ctx.log.info({ requestId: req.requestId, reason: err.message, sso_provider_id: provider.id }, 'SAML assertion refused');
    throw apiError('saml_assertion_invalid');
  }

  const read = readAssertion(profile, provider.attribute_mapping);
  if (!read.userId) throw apiError('saml_assertion_no_user_id');
  if (!read.email) throw apiError('saml_assertion_no_email');
  const providerName = `sso:${provider.id}`;
  const claims = ssoClaims(provider.entity_id, read.userId, read.email, read.claims);
  const target = ctx.redirect(started.redirectTo || undefined) ?? ctx.config.siteUrl;

  return tx(
    ctx.db,
    async (c) => {
      const { user, created } = await signInSsoUser(ctx, c, { provider: providerName, subject: read.userId, email: read.email, claims });
      if (started.flowStateId) {
        const code = await finishOAuthFlowState(c, started.flowStateId, {
          userId: user.id,
          providerAccessToken: '',
          providerRefreshToken: '',
        });
        return codeRedirect(target, code);
      }
      const session = await issueSession(ctx, c, user, 'sso/saml', req, {
        audit: { actor: actorOf(user), action: created ? 'user_signedup' : 'login', traits: { provider: providerName } },
        notAfter: read.sessionNotAfter,
      });
      return tokenFragmentRedirect(target, session);
    },
    req.signal,
  );
}

/** The provider and request of this post, from its RelayState (REFERENCE: the original's three cases). */
async function identifyFlow(ctx: AppContext, params: URLSearchParams, samlResponse: string): Promise<Started> {
  const relayState = params.get('RelayState') ?? '';
  if (UUID.test(relayState)) {
    const row = await takeRelayState(ctx.db, relayState.toLowerCase());
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
  if (params.get('SAMLart')) throw apiError('saml_artifact_unsupported');
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
