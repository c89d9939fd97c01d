// The after-user-created hook (docs/hooks.md#after-user-created): told of each user a request created, once
// that request's transaction has committed, with the user as committed. A creation is noted on the
// request where it happens; the route runner (http/dispatch.ts) calls the hook after the handler, so the
// hook's error is still the request's answer, as in the original (the user then exists).
import type { UserRow } from '../../db/users.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { findUserById } from '../../db/users.js';
import type { AppContext } from '../context.js';
import type { Run } from '../http/types.js';
import { userJson } from '../users/user-json.js';
import { hookEnabled, invokeHook, type HookRequest } from './invoke.js';

const created = new WeakMap<HookRequest, string[]>();

/** Notes that `user` was written by this request (it may still roll back: only committed users are told). */
export function noteUserCreated(ctx: Pick<AppContext, 'config'>, req: HookRequest, user: Pick<UserRow, 'id'>): void {
  if (!hookEnabled(ctx, 'afterUserCreated')) return;
  created.set(req, [...(created.get(req) ?? []), user.id]);
}

/** `run`, then the hook for each user it created that exists now (a rolled-back attempt's does not). */
export function withAfterUserCreated(run: Run): Run {
  return async (req, ctx) => {
    const reply = await run(req, ctx);
    const ids = created.get(req);
    if (!ids) return reply;
    created.delete(req);
    for (const id of new Set(ids)) {
      const user = await findUserById(ctx.db, id);
      if (!user) continue;
      await invokeHook(ctx, 'afterUserCreated', { user: userJson(user, await findIdentitiesByUser(ctx.db, id)) }, req);
    }
    return reply;
  };
}
