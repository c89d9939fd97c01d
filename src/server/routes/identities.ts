// Manual identity linking (docs/oauth.md#manual-linking), only with SECURITY_MANUAL_LINKING_ENABLED:
// GET /user/identities/authorize starts an OAuth flow whose callback adds the identity to the signed-in
// user; DELETE /user/identities/{identity_id} removes one of the user's identities.
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { deleteIdentity, findIdentitiesByUser } from '../../db/identities.js';
import { lockUserById, updateUser } from '../../db/users.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { addressesAfterUnlink } from '../users/email-from-identities.js';
import { writeAudit } from '../../db/audit-log.js';
import { actorOf } from '../users/actor.js';
import { startFlow } from '../oauth/start.js';
import { requestAudience } from '../auth/bearer.js';
import { providerUrl } from './oauth.js';
import type { Authenticated } from '../auth/principal.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';
import type { AppContext } from '../context.js';
import { notice, sendNotifications } from '../delivery/notifications.js';
import { canonicalUuid } from '../uuid-text.js';
import { withProviders } from '../users/providers-of-identities.js';

function requireManualLinking(ctx: AppContext): void {
  if (!ctx.config.security.manualLinkingEnabled) throw apiError('manual_linking_disabled');
}

/** The token was issued for this request's audience (X-JWT-AUD), as the original checks here. */
function requireAudience(req: ApiRequest, ctx: AppContext, principal: Authenticated): void {
  const requested = requestAudience(req, ctx);
  const aud = principal.claims.aud;
  const first = Array.isArray(aud) ? aud[0] : aud;
  if (first !== requested) throw apiError('unexpected_audience');
}

/**
 * 302 to the provider, or {url} with skip_http_redirect=true (only here, as the original; GET /authorize always redirects); auth-js's
 * linkIdentity always asks for the {url} and sends the browser there itself.
 */
export const linkIdentityAuthorize: GuardedHandler<Authenticated> = async (req, ctx, principal) => {
  requireManualLinking(ctx);
  requireAudience(req, ctx, principal);
  const url = await providerUrl(() => startFlow(req, ctx, { userId: principal.user.id, sessionId: principal.session?.id ?? null }));
  if (req.query.get('skip_http_redirect') === 'true') return { body: { url } };
  return { status: 302, headers: { Location: url } };
};

export const unlinkIdentity: GuardedHandler<Authenticated> = async (req, ctx, principal) => {
  requireManualLinking(ctx);
  // Any spelling the original's UUID reading takes (braces, urn:uuid:, bare hex) names the identity.
  const identityId = canonicalUuid(req.params.identity_id ?? '');
  if (!identityId) throw apiError('identity_id_format');
  requireAudience(req, ctx, principal);
  const unlinked = await tx(
    ctx.db,
    async (c) => {
      const user = await lockUserById(c, principal.user.id);
      if (!user) throw apiError('admin_user_not_found');
      // Ended since the bearer check (another session's new password, a revocation): no unlink for it.
      await assertSessionStillLive(c, principal.session?.id ?? null);
      const identities = await findIdentitiesByUser(c, user.id);
      if (identities.length <= 1) throw apiError('single_identity_not_deletable');
      const doomed = identities.find((i) => i.id === identityId);
      if (!doomed) throw apiError('identity_not_found');
      const rest = identities.filter((i) => i.id !== doomed.id);
      await deleteIdentity(c, doomed.id);
      // Oldest first (findIdentitiesByUser): the provider becomes the oldest remaining identity's, as the
      // original re-derives it, even when the one the user had is still linked.
      const addresses = await addressesAfterUnlink(c, user, doomed, rest, ctx.config.mailer.autoconfirm);
      const updated = await updateUser(c, user.id, {
        ...addresses,
        raw_app_meta_data: withProviders(user.raw_app_meta_data, rest),
      });
      await writeAudit(
        c,
        req,
        actorOf(user),
        'identity_unlinked',
        {
          identity_id: doomed.id,
          provider: doomed.provider,
          provider_id: doomed.provider_id,
        },
        req.ip,
      );
      // To the address the user had before: the unlinked identity may have taken it away (above).
      return notice(ctx, { kind: 'identityUnlinked', user: updated, to: user.email ?? '', provider: doomed.provider });
    },
    req.signal,
  );
  await sendNotifications(ctx, req, unlinked);
  return { body: {} };
};
