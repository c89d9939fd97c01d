// The start of an OAuth sign-in (GET /authorize) or of linking a provider to a signed-in user
// (GET /user/identities/authorize): a flow_state row whose id is the `state`, then the provider's
// authorization URL (docs/oauth.md#the-flow). The row holds the validated redirect_to, the client's PKCE
// challenge, the linking target and, for X, the verifier of the PKCE pair sent to the provider.
import { createHash, randomBytes } from 'node:crypto';
import { insertOAuthFlowState, setOAuth1Secret } from '../../db/flow-state.js';
import { apiError } from '../errors.js';
import { readPkceParams } from '../verify/pkce-challenge.js';
import { findTokenByLink } from '../verify/one-time-codes.js';
import { findUserById, lockUserById } from '../../db/users.js';
import { tx } from '../../db/pool.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { redirectTarget } from '../http/redirect-target.js';
import { clientIds } from '../providers/configured.js';
import { DiscoveryError, ProviderError } from '../providers/outbound.js';
import { beforeDeadline } from '../http/request-budget.js';
import { usableProvider } from './provider-lookup.js';
import { noteDeprecatedEndpoint } from '../deprecations.js';
import type { ApiRequest } from '../http/types.js';
import type { AppContext } from '../context.js';

/** An outbound call that would have ended past the request's deadline (http/request-budget.ts). */
const late = () => new ProviderError('the provider did not answer before the request deadline');
const lateDiscovery = () => new DiscoveryError(late());

// Never forwarded from /authorize's query to the provider: the flow sets them (REFERENCE §2.11).
const RESERVED = new Set([
  'provider',
  'scopes',
  'redirect_to',
  'invite_token',
  'skip_http_redirect',
  'client_id',
  'client_secret',
  'redirect_uri',
  'response_type',
  'state',
  'code_challenge',
  'code_challenge_method',
  'code_verifier',
  'scope',
]);

/**
 * The client's own parameters for the provider (auth-js queryParams): every one the flow does not set or read,
 * `Redirect_URI` too (a provider may read names in any case), each with its first value, as the original reads it.
 */
function forwardedParams(query: URLSearchParams): Map<string, string> {
  const forwarded = new Map<string, string>();
  for (const [key, value] of query) {
    if (!RESERVED.has(key.toLowerCase()) && !forwarded.has(key)) forwarded.set(key, value);
  }
  return forwarded;
}

/** An invite_token must name a pending invite (404 user_not_found "User identified by token not found", as the original). */
async function assertInvite(ctx: AppContext, inviteToken: string): Promise<void> {
  const token = await findTokenByLink(ctx.db, inviteToken, ['confirmation_token']);
  const user = token ? await findUserById(ctx.db, token.user_id) : null;
  if (!user?.invited_at) throw apiError('invite_token_unknown');
}

/** The signed-in user a link flow adds the identity to, and the session that asked for it. */
export interface LinkingTarget {
  userId: string;
  sessionId: string | null;
}

type FlowFields = Parameters<typeof insertOAuthFlowState>[1];

/**
 * Stores the flow. A link flow is stored under the user's row after its session is checked again: one that
 * another session's new password or a deletion ended while this waited stores nothing (403
 * session_not_found), or the provider's answer would later link an identity for a session already cut off.
 */
async function storeFlow(req: ApiRequest, ctx: AppContext, f: FlowFields, linking: LinkingTarget | null) {
  if (!linking) return insertOAuthFlowState(ctx.db, f);
  return tx(
    ctx.db,
    async (c) => {
      if (!(await lockUserById(c, linking.userId))) throw apiError('user_not_found');
      await assertSessionStillLive(c, linking.sessionId);
      return insertOAuthFlowState(c, f);
    },
    req.signal,
  );
}

/** The provider URL the browser is sent to. */
export async function startFlow(req: ApiRequest, ctx: AppContext, linking: LinkingTarget | null): Promise<string> {
  const query = req.query;
  const { name, module, rt } = await usableProvider(ctx, req, query.get('provider') ?? '');
  if (name === 'slack' || name === 'linkedin') noteDeprecatedEndpoint(`GET /authorize?provider=${name}`, ctx.log);
  // In the original's order: the provider, the invite, then the PKCE parameters.
  const inviteToken = query.get('invite_token') || null;
  if (inviteToken) await assertInvite(ctx, inviteToken);
  const pkce = readPkceParams({
    code_challenge: query.get('code_challenge') ?? '',
    code_challenge_method: query.get('code_challenge_method') ?? '',
  });
  const providerVerifier = module.protocol === 'oauth2' && module.pkceToProvider ? randomBytes(48).toString('base64url') : null;
  // Looked up before the flow is stored (OIDC discovery may be a network call): an unreachable provider leaves no row.
  // Before the request's deadline (http/request-budget.ts): a discovery that never answers is the provider's
  // refusal, not a 504.
  const endpoint = module.protocol === 'oauth2' ? await beforeDeadline(req, () => module.authorizationEndpoint(rt), lateDiscovery) : '';
  const fields = {
    provider: name,
    referrer: redirectTarget(req, ctx),
    codeChallenge: pkce?.codeChallenge ?? null,
    method: pkce?.method ?? null,
    inviteToken,
    linkingTargetId: linking?.userId ?? null,
    emailOptional: rt.config.emailOptional,
    providerCodeVerifier: providerVerifier,
  };
  const flow = await storeFlow(req, ctx, fields, linking);

  if (module.protocol === 'oauth1') {
    const callback = new URL(rt.config.redirectUri);
    callback.searchParams.set('state', flow.id);
    let step: Awaited<ReturnType<typeof module.requestToken>>;
    try {
      step = await beforeDeadline(req, () => module.requestToken(rt, callback.href), late);
    } catch (err) {
      if (err instanceof ProviderError) throw apiError('oauth_profile_failed', `Error getting request token: ${err.message}`);
      throw err;
    }
    await setOAuth1Secret(ctx.db, flow.id, step.secret);
    return step.authorizeUrl;
  }

  const url = new URL(endpoint);
  for (const [key, value] of module.forwardsQuery === false ? [] : forwardedParams(query)) {
    url.searchParams.set(key === 'workos_provider' ? 'provider' : key, value);
  }
  const extra = (query.get('scopes') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const scopes = module.scopesFor ? module.scopesFor(query.get('scopes') ?? '') : [...new Set([...module.defaultScopes, ...extra])];
  url.searchParams.set('client_id', clientIds(rt.config)[0]);
  url.searchParams.set('redirect_uri', rt.config.redirectUri);
  url.searchParams.set('response_type', 'code');
  if (scopes.length) url.searchParams.set('scope', scopes.join(module.scopeSeparator));
  url.searchParams.set('state', flow.id);
  if (providerVerifier) {
    url.searchParams.set('code_challenge', createHash('sha256').update(providerVerifier).digest('base64url'));
    url.searchParams.set('code_challenge_method', 'S256');
  }
  for (const [key, value] of Object.entries(module.authorizationParams?.(rt, query) ?? {})) url.searchParams.set(key, value);
  return url.href;
}
