// Anonymous sign-in: POST /signup with neither email nor phone (docs/users-and-audit.md#anonymous-users). The user has no
// identity and no provider in app_metadata, and its JWT says is_anonymous: true.
import { randomUUID } from 'node:crypto';
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { insertUser } from '../../db/users.js';
import { issueSession } from '../sessions/issue.js';
import { beforeUserCreated } from '../hooks/before-user-created.js';
import { noteUserCreated } from '../hooks/after-user-created.js';
import type { UserRow } from '../../db/users.js';
import { requestAudience } from '../auth/bearer.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { AppContext } from '../context.js';

export async function signUpAnonymously(req: ApiRequest, ctx: AppContext, data: Record<string, unknown>): Promise<ApiResponse> {
  if (!ctx.config.external.anonymousUsersEnabled) throw apiError('anonymous_provider_disabled');
  return tx(
    ctx.db,
    async (c) => {
      const fields = {
        id: randomUUID(),
        aud: requestAudience(req, ctx),
        role: ctx.config.jwt.defaultGroupName,
        raw_app_meta_data: {},
        raw_user_meta_data: data,
        is_anonymous: true,
      };
      // docs/hooks.md#before-user-created: the hook sees the user before the insert, as for any sign-up.
      await beforeUserCreated(ctx, anonymousRow(fields), req, c);
      const user = (await insertUser(c, fields))!;
      noteUserCreated(ctx, req, user);
      return {
        body: await issueSession(ctx, c, user, 'anonymous', req, {
          audit: { actor: { id: user.id, username: '' }, action: 'user_signedup', traits: { provider: 'anonymous' } },
        }),
      };
    },
    req.signal,
  );
}

/** The row the anonymous user will have, for the hook's payload. */
function anonymousRow(fields: { id: string; aud: string; role: string; raw_user_meta_data: Record<string, unknown> }): UserRow {
  const now = new Date();
  return {
    ...fields,
    email: null,
    phone: null,
    encrypted_password: null,
    email_confirmed_at: null,
    phone_confirmed_at: null,
    confirmed_at: null,
    invited_at: null,
    confirmation_sent_at: null,
    recovery_sent_at: null,
    email_change: null,
    email_change_sent_at: null,
    email_change_confirm_status: 0,
    phone_change: null,
    phone_change_sent_at: null,
    reauthentication_sent_at: null,
    last_sign_in_at: null,
    raw_app_meta_data: {},
    banned_until: null,
    deleted_at: null,
    is_anonymous: true,
    is_sso_user: false,
    created_at: now,
    updated_at: now,
  };
}
