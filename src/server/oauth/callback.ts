// GET|POST /callback (docs/oauth.md#the-flow): the provider sends the browser back with `code` and `state`
// (Apple posts them as a form; Twitter sends oauth_token and oauth_verifier). The state's flow is read, the
// code exchanged and the profile read, with no transaction open; then one short transaction claims the flow
// (so a state works once, and only a callback that succeeds spends it, as the original's does), decides the
// account (oauth/linking.ts) and issues the session, or the code of a PKCE flow, or sends the confirmation
// mail of an unverified address (oauth/unverified.ts). Every failure becomes a redirect carrying the error:
// a bad state's to SITE_URL, any other to EXTERNAL_REDIRECT_URL when set (REFERENCE §9.5).
import { ApiError, apiError } from '../errors.js';
import { sendingTx } from '../delivery/sending-tx.js';
import {
  claimOAuthFlowState,
  deleteFlowState,
  findOAuthFlowState,
  finishOAuthFlowState,
  releaseOAuthFlowState,
  type OAuthFlowStateRow,
} from '../../db/flow-state.js';
import { writeAudit } from '../../db/audit-log.js';
import { lockUserById } from '../../db/users.js';
import { readUuid } from '../uuid-text.js';
import { redirectTarget } from '../http/redirect-target.js';
import { issueSession } from '../sessions/issue.js';
import { actorOf } from '../users/actor.js';
import { DiscoveryError, ProviderError } from '../providers/outbound.js';
import { IdTokenError } from '../providers/runtime.js';
import type {
  ExternalProfile,
  ExternalProvider,
  OAuth1Provider,
  OAuth2Provider,
  ProviderRuntime,
  ProviderTokens,
} from '../providers/types.js';
import { PROVIDERS } from '../providers/index.js';
import { usableProvider } from './provider-lookup.js';
import { signInExternal } from './linking.js';
import { notice, sendNotifications, type Notification } from '../delivery/notifications.js';
import { mailUnverified } from './unverified.js';
import { announceCreatedUsers } from '../hooks/after-user-created.js';
import { codeRedirect, flowError, providerError, sessionRedirect, stateError } from './redirects.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import { beforeDeadline } from '../http/request-budget.js';
import type { AppContext } from '../context.js';

export async function handleCallback(req: ApiRequest, ctx: AppContext): Promise<ApiResponse> {
  // A posted form's fields, then the query's, as Go's form reading gives them (read once, http/logger-form.ts).
  const params = req.form;
  const state = params.get('state') ?? '';
  // Bad state names no flow: its errors go to SITE_URL, as the original sends them (EXTERNAL_REDIRECT_URL
  // is where a flow's own answers go).
  const siteUrl = ctx.config.siteUrl;
  if (!state) return stateError(siteUrl, apiError('oauth_state_missing'));
  const id = readUuid(state);
  if ('error' in id) return stateError(siteUrl, apiError('oauth_state_invalid'));
  const flow = id.uuid ? await findOAuthFlowState(ctx.db, id.uuid) : null;
  if (!flow) return stateError(siteUrl, apiError('oauth_state_not_found'));
  if (flow.created_at.getTime() + ctx.config.external.flowStateExpirySeconds * 1000 < Date.now()) {
    return stateError(siteUrl, apiError('oauth_state_expired'));
  }
  // Only a finished PKCE flow is kept with its claim (an implicit one is deleted): its state is spent.
  if (flow.callback_at) return stateError(siteUrl, apiError('flow_state_already_used'));
  const target = ctx.config.external.redirectUrl || flow.referrer || ctx.config.siteUrl;
  // The provider's refusal, like any failure below, leaves the flow unclaimed: the state may be tried again.
  // OAuth 1.0a has no `error` parameter (Twitter sends `denied`), and the original reads none for Twitter.
  const providerErr = speaksOAuth1(flow.provider_type) ? null : params.get('error');
  if (providerErr) return providerError(target, providerErr, params.get('error_description') ?? '');
  try {
    return await finish(req, ctx, flow, params, target);
  } catch (err) {
    if (err instanceof ApiError) return flowError(target, err);
    ctx.log.error({ err, requestId: req.requestId }, 'OAuth callback failed');
    return flowError(target, apiError('unexpected_failure'));
  }
}

/** Twitter's flow: its callback carries oauth_token and oauth_verifier rather than a code. */
function speaksOAuth1(provider: string): boolean {
  return (PROVIDERS as Partial<Record<string, ExternalProvider>>)[provider]?.protocol === 'oauth1';
}

type ProviderSide = { tokens: ProviderTokens; profile: ExternalProfile };

/** The provider's side of the callback, in the original's order: an OAuth 2.0 code is looked for before the provider. */
async function readProvider(
  req: ApiRequest,
  ctx: AppContext,
  flow: OAuthFlowStateRow,
  params: URLSearchParams,
): Promise<ProviderSide & { name: string }> {
  const code = params.get('code') ?? '';
  if (!speaksOAuth1(flow.provider_type) && !code) throw apiError('oauth_code_missing');
  const { name, module, rt } = await usableProvider(ctx, req, flow.provider_type, 'oauth_provider_not_supported');
  const side =
    module.protocol === 'oauth2'
      ? await readByCode(req, ctx, module, rt, code, flow, params)
      : await readOAuth1(req, ctx, module, rt, flow, params);
  return { name, ...side };
}

async function readByCode(
  req: ApiRequest,
  ctx: AppContext,
  module: OAuth2Provider,
  rt: ProviderRuntime,
  code: string,
  flow: OAuthFlowStateRow,
  params: URLSearchParams,
): Promise<ProviderSide> {
  const exchange = () => module.exchangeCode(rt, code, flow.provider_code_verifier ?? undefined);
  const tokens = await outbound(req, ctx, exchange, 'exchange', () =>
    apiError('oauth_exchange_failed', `Unable to exchange external code: ${code.slice(0, 4)}`),
  );
  const profile = await outbound(
    req,
    ctx,
    () => module.fetchProfile(rt, tokens, params),
    'profile',
    () => apiError('oauth_profile_failed'),
  );
  return { tokens, profile };
}

/**
 * Twitter's two steps, failing in the original's words for them. A person who declined comes back with
 * `denied` and no token: the original asks Twitter all the same and reports its refusal, answered here without asking.
 */
async function readOAuth1(
  req: ApiRequest,
  ctx: AppContext,
  module: OAuth1Provider,
  rt: ProviderRuntime,
  flow: OAuthFlowStateRow,
  params: URLSearchParams,
): Promise<ProviderSide> {
  const exchangeFailed = () => apiError('oauth_exchange_failed', 'Unable to retrieve access token');
  const token = params.get('oauth_token') ?? '';
  const verifier = params.get('oauth_verifier') ?? '';
  if (!token || !verifier) throw exchangeFailed();
  const secret = flow.oauth1_token_secret ?? '';
  const tokens = await outbound(req, ctx, () => module.accessToken(rt, token, secret, verifier), 'exchange', exchangeFailed);
  const profile = await outbound(
    req,
    ctx,
    () => module.fetchProfile(rt, tokens),
    'profile',
    () => apiError('oauth_profile_failed', 'Error getting user email from external provider'),
  );
  return { tokens, profile };
}

async function finish(req: ApiRequest, ctx: AppContext, flow: OAuthFlowStateRow, params: URLSearchParams, target: string) {
  const { name, tokens, profile } = await readProvider(req, ctx, flow, params);

  // No address from the provider ends every flow here unless the provider's EMAIL_OPTIONAL: a returning
  // identity, a link and an invite alike, before DISABLE_SIGNUP is consulted (as the original checks it).
  const emailOptional = flow.email_optional || profile.addressless === true;
  if (profile.emails.length === 0 && !emailOptional) throw apiError('oauth_email_missing');

  let notifications: Notification[] = [];
  const outcome = await sendingTx(ctx, req.signal, async (c): Promise<ApiResponse | ApiError> => {
    // A link's target user locked before its flow: the user's deletion locks the row and then cascades to the
    // flow (linking_target_id), so the other way round a link beside an admin's deletion deadlocked (a 500).
    // Deleted meanwhile: as linking.ts answers a target that is gone.
    if (flow.linking_target_id && !(await lockUserById(c, flow.linking_target_id))) throw apiError('admin_user_not_found');
    // Claimed in this transaction: a concurrent callback with the same state waits here, then is refused.
    if (!(await claimOAuthFlowState(c, flow.id))) throw apiError('flow_state_already_used');
    const {
      user,
      audit,
      needsConfirmation,
      linked,
      refusal: unverified,
    } = await signInExternal(ctx, c, {
      provider: name,
      profile,
      linkingTargetId: flow.linking_target_id,
      inviteToken: flow.invite_token,
      emailOptional,
      aud: ctx.config.jwt.aud,
      hookRequest: req,
    });
    if (needsConfirmation) {
      // The mail's link returns where the original's does: the callback request's own redirect target (its
      // redirect_to, else an allowed Referer, else SITE_URL), not the flow's.
      const mailTarget = redirectTarget({ headers: req.headers, form: params }, ctx);
      const refusal = await mailUnverified(ctx, c, user, name, mailTarget, req, unverified);
      if (refusal) {
        await releaseOAuthFlowState(c, flow.id);
        return refusal;
      }
    }
    notifications = linked ? notice(ctx, { kind: 'identityLinked', user, provider: name }) : [];
    const traits = { provider: name };
    if (flow.code_challenge) {
      // The sign-in is audited here, as in the implicit flow; the code exchange adds its own login.
      if (audit) await writeAudit(c, req, actorOf(user), audit, traits);
      const authCode = await finishOAuthFlowState(c, flow.id, {
        userId: user.id,
        providerAccessToken: tokens.accessToken,
        providerRefreshToken: tokens.refreshToken,
      });
      return codeRedirect(target, authCode);
    }
    await deleteFlowState(c, flow.id);
    // An accepted invite is audited invite_accepted alone (oauth/account-confirmation.ts): issuing its session adds nothing, as the original.
    const session = await issueSession(ctx, c, user, 'oauth', req, {
      audit: audit ? { actor: actorOf(user), action: audit, traits } : undefined,
    });
    return sessionRedirect(target, name, session, tokens.accessToken, tokens.refreshToken);
  });
  // The refusal of an unverified address is answered after its transaction committed the user and the mail.
  if (outcome instanceof ApiError) return flowError(target, outcome);
  // Here rather than after the handler: the hook's error is redirected like every error of the flow.
  await announceCreatedUsers(req, ctx);
  await sendNotifications(ctx, req, notifications);
  return outcome;
}

/**
 * A provider call; its failure becomes `refusal` (the original's 500 for that step), logged with its cause.
 * It gives up before the request's deadline (http/request-budget.ts), so even a provider that never answers
 * ends in the redirect, not the 504.
 */
async function outbound<T>(
  req: ApiRequest,
  ctx: AppContext,
  call: () => Promise<T>,
  step: 'exchange' | 'profile',
  refusal: () => ApiError,
): Promise<T> {
  try {
    return await beforeDeadline(req, call, () => new ProviderError('the provider did not answer before the request deadline'));
  } catch (err) {
    if (!(err instanceof ProviderError) && !(err instanceof IdTokenError)) throw err;
    ctx.log.warn({ step, cause: err.message }, 'OAuth provider call failed');
    // As the original, which cannot build a provider without its discovery document.
    if (err instanceof DiscoveryError) throw apiError('oauth_provider_not_supported', `Unsupported provider: ${err.message}`);
    // The cause (a provider's host, status, why its id_token failed) is logged above, never put in the redirect URL.
    throw refusal();
  }
}
