// Anonymous sign-in: POST /signup with neither email nor phone (docs/users-and-audit.md#anonymous-users). The user has no
// identity and no provider in app_metadata, and its JWT says is_anonymous: true.
import { randomUUID } from 'node:crypto';
import { apiError } from '../errors.js';
import { insertNewUser } from '../users/insert-new-user.js';

import { issueSession, issuingTx } from '../sessions/issue.js';
import { beforeUserCreated } from '../hooks/before-user-created.js';
import { noteUserCreated } from '../hooks/after-user-created.js';
import { blankUserRow } from '../users/create.js';
import { requestAudience } from '../auth/bearer.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { AppContext } from '../context.js';

export async function signUpAnonymously(req: ApiRequest, ctx: AppContext, data: Record<string, unknown>): Promise<ApiResponse> {
  if (!ctx.config.external.anonymousUsersEnabled) throw apiError('anonymous_provider_disabled');
  if (ctx.config.disableSignup) throw apiError('signup_disabled');
  return issuingTx(
    ctx,
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
      await beforeUserCreated(ctx, { ...blankUserRow(fields.id), ...fields }, req, c);
      const user = (await insertNewUser(c, fields, 'database_error_creating_anonymous_user'))!;
      noteUserCreated(ctx, req, user);
      return {
        // No audit entry: the original writes none for an anonymous sign-in, and audit-log readers count on it.
        body: await issueSession(ctx, c, user, 'anonymous', req),
      };
    },
    req.signal,
    ['beforeUserCreated'],
  );
}
