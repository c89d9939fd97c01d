// POST /sso/saml/acs (docs/sso-saml.md#the-flow): the IdP's browser post of SAMLResponse (or of an artifact,
// resolved by saml/artifact.ts) and RelayState. Its flow and provider are found first (saml/acs-flow.ts); the
// response is then verified (saml/verify-response.ts) with no transaction open; then one transaction finds or creates the
// user and issues the session (or the PKCE code), having first claimed the assertion's ID so that a response
// is accepted once, with or without a relay state (docs/sso-saml.md#replay). Every refusal is a 303 to
// SITE_URL carrying the error, as the original answers.
import { ApiError, apiError } from '../errors.js';
import { finishOAuthFlowState } from '../../db/flow-state.js';
import { acsError, codeRedirect } from '../oauth/redirects.js';
import { issueSession, issuingTx } from '../sessions/issue.js';
import { actorOf } from '../users/actor.js';
import { writeAudit } from '../../db/audit-log.js';
import { claimSamlAssertion } from '../../db/saml-assertion-uses.js';
import { identifyFlow } from './acs-flow.js';
import { readAcsForm } from './acs-form.js';
import { freshMetadata } from './metadata-refresh.js';
import { verifyResponse, AssertionRejected } from './verify-response.js';
import { readAssertion, type ReadAssertion } from './assertion.js';
import { storableAssertion, UnstorableProfile } from '../providers/storable.js';
import { samlKeys, type SamlKey } from './keys.js';
import { resolveArtifact } from './artifact.js';
import type { IdpMetadata } from './idp-metadata.js';
import { spUrls } from './sp.js';
import { signInSsoUser, ssoClaims } from './sign-in-user.js';
import { tokenFragmentRedirect } from './redirects.js';
import { announceCreatedUsers } from '../hooks/after-user-created.js';
import { beforeDeadline } from '../http/request-budget.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { AppContext } from '../context.js';

export async function handleAcs(req: ApiRequest, ctx: AppContext): Promise<ApiResponse> {
  try {
    return await consume(req, ctx);
  } catch (err) {
    if (err instanceof ApiError) return acsError(ctx.config.siteUrl, err);
    ctx.log.error({ err, requestId: req.requestId }, 'SAML ACS failed');
    return acsError(ctx.config.siteUrl, apiError('unexpected_failure'));
  }
}

async function consume(req: ApiRequest, ctx: AppContext): Promise<ApiResponse> {
  const form = await readAcsForm(req);
  const started = await identifyFlow(ctx, form);
  const provider = started.provider;
  const idp = await freshMetadata(ctx, provider, req);
  const keys = samlKeys(ctx.config);
  const artifact = form.artifact;
  // An artifact (only an SP-initiated flow gets this far with one) is resolved once, before the key rotation's second try.
  const samlResponse = artifact ? await resolved(ctx, req, provider.id, artifact, { idp, key: keys.current }) : form.postedResponse;
  const verify = (key: typeof keys.current | null) =>
    verifyResponse(samlResponse, {
      idp,
      sp: spUrls(ctx.config),
      requestId: started.requestId,
      decryptionKey: ctx.config.saml.allowEncryptedAssertions ? key : null,
    });
  let verified;
  try {
    verified = await verify(keys.current).catch((err: unknown) => {
      // During a key rotation an IdP may still encrypt to the other key (docs/sso-saml.md#keys).
      if (err instanceof AssertionRejected && ctx.config.saml.allowEncryptedAssertions && keys.next) return verify(keys.next);
      throw err;
    });
  } catch (err) {
    throw refused(ctx, req, provider.id, err);
  }
  const { profile, assertionId, usableUntil } = verified;

  const read = storableRead(ctx, req, provider.id, readAssertion(profile, provider.attribute_mapping));
  if (!read.userId) throw apiError('saml_assertion_no_user_id');
  if (!read.email) throw apiError('saml_assertion_no_email');
  const providerName = `sso:${provider.id}`;
  const claims = ssoClaims(provider.entity_id, read.userId, read.email, read.claims);
  const target = ctx.redirect(started.redirectTo || undefined) ?? ctx.config.siteUrl;

  const response = await issuingTx(
    ctx,
    async (c) => {
      // First, so a replay (an IdP-initiated one has no relay state to use up) waits for this sign-in and
      // is then refused; a sign-in that fails later rolls its claim back with it.
      if (!(await claimSamlAssertion(c, provider.id, assertionId, usableUntil)))
        throw refused(ctx, req, provider.id, new AssertionRejected('assertion already used'));
      const { user, created } = await signInSsoUser(ctx, c, req, {
        provider: providerName,
        subject: read.userId,
        email: read.email,
        claims,
      });
      const audit = {
        actor: actorOf(user),
        action: created ? ('user_signedup' as const) : ('login' as const),
        traits: { provider: providerName },
      };
      if (started.flowStateId) {
        // Audited here as in the implicit flow (the original audits the sign-in before it looks at the flow);
        // the code exchange adds its own login entry.
        await writeAudit(c, req, audit.actor, audit.action, audit.traits);
        const code = await finishOAuthFlowState(c, started.flowStateId, {
          userId: user.id,
          providerAccessToken: '',
          providerRefreshToken: '',
        });
        return codeRedirect(target, code);
      }
      const session = await issueSession(ctx, c, user, 'sso/saml', req, {
        audit,
        notAfter: read.sessionNotAfter,
      });
      return tokenFragmentRedirect(target, session);
    },
    req.signal,
    ['beforeUserCreated'],
  );
  // Here rather than after the handler: the hook's error is redirected like every error of the flow.
  await announceCreatedUsers(req, ctx);
  return response;
}

async function resolved(
  ctx: AppContext,
  req: ApiRequest,
  providerId: string,
  artifact: string,
  o: { idp: IdpMetadata; key: SamlKey },
): Promise<string> {
  try {
    const spEntityId = spUrls(ctx.config).entityId;
    // Before the request's deadline (http/request-budget.ts): an IdP that never answers is a refused
    // assertion in the redirect, not a 504.
    const resolve = () => resolveArtifact(artifact, { ...o, spEntityId, timeoutSeconds: ctx.config.external.httpTimeoutSeconds });
    return await beforeDeadline(
      req,
      resolve,
      () => new AssertionRejected('cannot resolve artifact: no answer before the request deadline'),
    );
  } catch (err) {
    throw refused(ctx, req, providerId, err);
  }
}

/** A response (or artifact) that failed its checks: the original's one answer, the reason in the log. */
function refused(ctx: AppContext, req: ApiRequest, providerId: string, err: unknown): unknown {
  if (!(err instanceof AssertionRejected)) return err;
  ctx.log.info({ requestId: req.requestId, reason: err.message, sso_provider_id: providerId }, 'SAML assertion refused');
  return apiError('saml_assertion_invalid');
}

/**
 * The assertion as PostgreSQL can hold it (providers/storable.ts): a raw NUL byte is well-formed enough for
 * the XML parsers, but a user ID or email holding one is refused as an invalid assertion.
 */
function storableRead(ctx: AppContext, req: ApiRequest, providerId: string, read: ReadAssertion): ReadAssertion {
  try {
    return storableAssertion(read);
  } catch (err) {
    if (!(err instanceof UnstorableProfile)) throw err;
    ctx.log.info({ requestId: req.requestId, reason: err.message, sso_provider_id: providerId }, 'SAML assertion refused');
    throw apiError('saml_assertion_invalid');
  }
}
