// grant_type=id_token (docs/oauth.md#the-id_token-grant): a client that signed the person in with the provider
// itself (Sign in with Apple/Google on a device, auth-js signInWithIdToken) hands over the id_token. The
// provider is a built-in one, a custom one or an allowed issuer (id-token-source.ts); the token is verified
// against its issuer's JWKS (signature, iss, aud = one of the provider's client ids, exp), its claims' JSON
// types (id-token-claims.ts), its at_hash against the access token when one is given, its nonce against the
// client's raw nonce (the token must carry its SHA-256 hex); then the same account rules as the callback. The token's own refusals are OAuth-style bodies {error, error_description}, always 400.
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { issueSession } from '../sessions/issue.js';
import { actorOf } from '../users/actor.js';
import { bodySchema } from '../http/validate.js';
import { authenticate, requestAudience } from '../auth/bearer.js';
import { IdTokenError } from '../providers/runtime.js';
import { accessTokenHashMatches } from '../providers/at-hash.js';
import { ProviderError } from '../providers/outbound.js';
import { storableProfile, UnstorableProfile } from '../providers/storable.js';
import { signInExternal } from '../oauth/linking.js';
import { notice, sendNotifications, type Notification } from '../delivery/notifications.js';
import { mailUnverified } from '../oauth/unverified.js';
import { redirectTarget } from '../http/redirect-target.js';
import type { ApiResponse } from '../http/types.js';
import { beforeDeadline } from '../http/request-budget.js';
import type { AppContext } from '../context.js';
import type { Grant } from './grant.js';
import { OAuthRefusal, refusalResponse } from './oauth-refusal.js';
import { idTokenSource, type IdTokenSource } from './id-token-source.js';
import { readClaimsAs } from './id-token-claims.js';

const schema = bodySchema({
  id_token: 'string',
  access_token: 'string',
  nonce: 'string',
  provider: 'string',
  client_id: 'string',
  issuer: 'string',
  link_identity: 'boolean',
});

export const idToken: Grant<ReturnType<typeof schema>> = {
  grantType: 'id_token',
  schema,
  async handle(req, ctx, body) {
    try {
      return await grant(req, ctx, body);
    } catch (err) {
      if (err instanceof OAuthRefusal) return refusalResponse(err, req);
      throw err;
    }
  },
};

async function grant(req: Parameters<Grant['handle']>[0], ctx: AppContext, body: ReturnType<typeof schema>): Promise<ApiResponse> {
  const token = body.id_token ?? '';
  if (!token) throw new OAuthRefusal('invalid request', 'id_token required');
  const [provider, clientId, issuer] = [body.provider ?? '', body.client_id ?? '', body.issuer ?? ''];
  if (!provider && (!clientId || !issuer)) throw new OAuthRefusal('invalid request', 'provider or client_id and issuer required');
  // A signed-in user linking this identity (auth-js linkIdentity with an id_token) is checked first, before
  // the provider is looked up or any outbound call is made, as the original orders it.
  const linking = body.link_identity === true ? await linkingUser(req, ctx) : null;
  const source = await idTokenSource(ctx, req, { provider, clientId, issuer, idToken: token });
  const name = source.name;

  let claims: Record<string, unknown>;
  try {
    // The issuer's discovery document and keys are fetched within INTERNAL_HTTP_TIMEOUT, as long as the request's
    // own deadline by default: an issuer that never answered raced it into the 504. The check gives up before
    // the deadline instead (http/request-budget.ts), a bad token as with an unreachable issuer.
    const late = () => new ProviderError(`${name} did not answer before the request deadline`);
    claims = await beforeDeadline(req, () => source.verify(token), late);
  } catch (err) {
    if (err instanceof IdTokenError || err instanceof ProviderError) {
      ctx.log.info({ provider: name, cause: err.message }, 'id_token refused');
      if (err instanceof IdTokenError && err.claims) checkReadable(ctx, source, token, body.access_token ?? '', err.claims);
      if (err instanceof IdTokenError && err.refusal === 'no_subject')
        throw new OAuthRefusal('invalid request', 'Missing sub claim in id_token');
      // Printed as the original prints a list of strings: `[a b]`, `[]` for none.
      if (err instanceof IdTokenError && err.refusal === 'audience')
        throw new OAuthRefusal('invalid request', `Unacceptable audience in id_token: [${err.audience.join(' ')}]`);
      throw new OAuthRefusal('invalid request', 'Bad ID token');
    }
    throw err;
  }
  const read = checkReadable(ctx, source, token, body.access_token ?? '', claims);
  checkNonce(body.nonce ?? '', read.nonce, source.skipNonceCheck);

  const profile = storableTokenProfile(ctx, source, read);
  let notifications: Notification[] = [];
  const response = await sendingTx(ctx, req.signal, async (c) => {
    notifications = [];
    const {
      user,
      audit,
      needsConfirmation,
      linked,
      refusal: unverified,
    } = await signInExternal(ctx, c, {
      provider: name,
      profile,
      linkingTargetId: linking?.user.id ?? null,
      emailOptional: source.emailOptional || profile.addressless === true,
      aud: requestAudience(req, ctx),
      hookRequest: req,
    });
    if (needsConfirmation) {
      const refusal = await mailUnverified(ctx, c, user, name, redirectTarget(req, ctx), req, unverified);
      if (refusal) return refusal;
    }
    if (linked) notifications = notice(ctx, { kind: 'identityLinked', user, provider: name });
    return issueSession(ctx, c, user, 'oauth', req, {
      // As oauth/linking.ts decides it: a link is audited as identity_linked alone.
      audit: audit ? { actor: actorOf(user), action: audit, traits: { provider: name } } : undefined,
    });
  });
  // An unverified address: the user and the confirmation mail are committed, then the 422 is answered.
  if (response instanceof ApiError) throw response;
  await sendNotifications(ctx, req, notifications);
  return { body: response };
}

/**
 * What the original's parser checks once the signature holds, before `sub`, `aud` or the nonce: every claim
 * decodes into its reader's field (id-token-claims.ts), and a non-empty at_hash is the access token's when
 * one is sent. Either failure is its one answer for a bad token. Returns the claims as that reader decodes them.
 */
function checkReadable(
  ctx: AppContext,
  source: IdTokenSource,
  token: string,
  accessToken: string,
  raw: Record<string, unknown>,
): Record<string, unknown> {
  const provider = source.name;
  const { claims, misfit } = readClaimsAs(source.reader, raw);
  const atHash = typeof claims.at_hash === 'string' ? claims.at_hash : '';
  const cause = misfit
    ? `claim ${misfit} is not of the type the original reads it as`
    : accessToken && atHash && !accessTokenHashMatches(token, accessToken, atHash)
      ? 'at_hash does not match the access token'
      : null;
  if (!cause) return claims;
  ctx.log.info({ provider, cause }, 'id_token refused');
  throw new OAuthRefusal('invalid request', 'Bad ID token');
}

/**
 * The token's person as it may be stored (providers/storable.ts; oauth/linking.ts makes it so for every
 * sign-in): checked here too so that a sub or email holding a NUL is refused in the grant's own words.
 */
function storableTokenProfile(ctx: AppContext, source: IdTokenSource, claims: Record<string, unknown>) {
  try {
    return storableProfile(source.profile(claims));
  } catch (err) {
    if (!(err instanceof UnstorableProfile)) throw err;
    ctx.log.info({ provider: source.name, cause: err.message }, 'id_token refused');
    throw new OAuthRefusal('invalid request', 'Bad ID token');
  }
}

/** The original's rule: both present with the token's nonce the SHA-256 hex of the given one, or both absent; SKIP_NONCE_CHECK skips it all. */
function checkNonce(given: string, inToken: unknown, skip: boolean): void {
  if (skip) return;
  const tokenNonce = typeof inToken === 'string' ? inToken : '';
  if (given && tokenNonce) {
    const hash = createHash('sha256').update(given).digest('hex');
    // Only the hash: were the token's own claim accepted as the raw value, whoever holds a leaked id_token
    // could replay it by reading the nonce out of it.
    if (hash !== tokenNonce) throw new OAuthRefusal('invalid nonce', 'Nonces mismatch');
    return;
  }
  if (given || tokenNonce) {
    throw new OAuthRefusal('invalid request', 'Passed nonce and nonce in id_token should either both exist or not.');
  }
}

/** Linking needs the user's own token; without any Authorization the original answers in the grant's OAuth style. */
async function linkingUser(req: Parameters<Grant['handle']>[0], ctx: AppContext) {
  if (!req.headers.authorization) {
    throw new OAuthRefusal('invalid request', 'Linking requires a valid user access token in Authorization');
  }
  return authenticate(req, ctx);
}
