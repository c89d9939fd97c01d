// POST /invite (docs/one-time-codes-and-mail.md#invites): an admin invites an address. The user is created without a
// password (or an unconfirmed one is reused), stamped invited_at, and mailed an invite link whose token
// is a confirmation token; GET /verify type=invite then signs them in with type=invite in the fragment,
// so the app shows a set-password form. No per-user frequency limit, as in the original.
import { apiError } from '../errors.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { findUserByEmail, lockLiveUserAt, MOVED, updateUser, type UserRow } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { writeAudit } from '../../db/audit-log.js';
import { normaliseEmail } from '../users/addresses.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { createUserAfterHook } from '../hooks/before-user-created.js';
import { userJson } from '../users/user-json.js';
import { sendEmailToken } from '../delivery/send-token.js';
import { redirectTarget } from '../http/redirect-target.js';
import { adminAudience, type Admin } from '../auth/admin.js';
import type { GuardedHandler } from '../http/types.js';
import { nowTimestamp } from '../micro-clock.js';

// email is read as sent: anything but a non-empty string is the original's "An email address is required".
const FIELDS = { email: 'unknown', data: 'object' } as const;
export const inviteBody = bodySchema(FIELDS);

export const invite: GuardedHandler<Admin, BodyOf<typeof FIELDS>> = async (req, ctx, admin) => {
  const body = req.body();
  const email = normaliseEmail(body.email);
  const data = body.data ?? {};
  const aud = adminAudience(req, ctx);
  const redirectTo = redirectTarget(req, ctx);
  const user = await sendingTx(ctx, req.signal, async (c) => {
    // Locked before its confirmation token is replaced: user, then token, as /verify (db/one-time-tokens.ts).
    // A user deleted meanwhile (soft-deleted: its address already obfuscated) is no longer the address's:
    // the invitee gets a new user, not a link to one that can never be signed in to.
    let existing = await lockHolder(c, email, aud);
    // Given another address meanwhile (an admin's update): not the address's user either, and a link to it
    // would sign the invitee into that account. The address is looked up once more, as after the change.
    if (existing === MOVED) existing = await lockHolder(c, email, aud);
    if (existing === MOVED) throw apiError('email_exists');
    if (existing?.email_confirmed_at) throw apiError('email_exists');
    const invited =
      existing ??
      (
        await createUserAfterHook(
          ctx,
          c,
          {
            provider: 'email',
            address: email,
            aud,
            role: ctx.config.jwt.defaultGroupName,
            passwordHash: null,
            data,
            confirmed: false,
            metadataAsSent: true,
          },
          req,
        )
      )?.user;
    if (!invited) throw apiError('email_exists'); // a concurrent sign-up took the address
    await writeAudit(c, req, admin.actor, 'user_invited', { user_id: invited.id, user_email: email });
    await sendEmailToken(ctx, c, invited, { kind: 'invite', tokenType: 'confirmation_token', to: email, redirectTo }, req);
    const now = nowTimestamp();
    const sent = await updateUser(c, invited.id, { invited_at: now, confirmation_sent_at: now });
    return userJson(sent, await findIdentitiesByUser(c, sent.id));
  });
  return { body: user };
};

/** The live user holding the address, locked; MOVED when the one found was given another before the lock. */
async function lockHolder(c: Queryable, email: string, aud: string): Promise<UserRow | null | typeof MOVED> {
  const found = await findUserByEmail(c, email, aud);
  return found && lockLiveUserAt(c, found.id, email);
}
