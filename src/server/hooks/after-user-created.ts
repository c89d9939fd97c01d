// The after-user-created hook (docs/hooks.md#after-user-created): told of each user a request created, once
// that request's transaction has committed, with the user as committed. A creation is noted on the
// request where it happens; the route runner (http/dispatch.ts) calls the hook after the handler, so the
// hook's error is still the request's answer, as in the original (the user then exists).
import { apiError } from '../errors.js';
import type { UserRow } from '../../db/users.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { findUserById } from '../../db/users.js';
import type { AppContext } from '../context.js';
import type { ApiResponse, Run } from '../http/types.js';
import { userJson } from '../users/user-json.js';
import { noOutput } from './answer.js';
import { hookEnabled, invokeHook, type HookRequest } from './invoke.js';

const created = new WeakMap<HookRequest, string[]>();

/** Notes that `user` was written by this request (it may still roll back: only committed users are told). */
export function noteUserCreated(ctx: Pick<AppContext, 'config'>, req: HookRequest, user: Pick<UserRow, 'id'>): void {
  if (!hookEnabled(ctx, 'afterUserCreated')) return;
  created.set(req, [...(created.get(req) ?? []), user.id]);
}

/** `run`, then the hook for each user it created that exists now (a rolled-back attempt's does not). */
export function withAfterUserCreated(run: Run): Run {
  // Not an async wrapper: a request that created nobody (nearly all) pays no extra promise for it.
  return (req, ctx) => {
    const reply = run(req, ctx);
    return reply instanceof Promise ? reply.then((r) => afterRun(r, req, ctx)) : afterRun(reply, req, ctx);
  };
}

function afterRun(reply: ApiResponse, req: HookRequest, ctx: AppContext): ApiResponse | Promise<ApiResponse> {
  if (!created.has(req)) return reply;
  return announceCreatedUsers(req, ctx).then(() => reply);
}

/**
 * Calls the hook now for the users this request created so far (once committed), for a handler that must
 * answer the hook's error in its own way: the OAuth callback redirects with it, as every error of its flow.
 */
export async function announceCreatedUsers(req: HookRequest, ctx: AppContext): Promise<void> {
  const ids = created.get(req);
  if (!ids) return;
  created.delete(req);
  await tellHook(ids, req, ctx);
}

/**
 * announceCreatedUsers for the sign-ups of POST /signup (and those /otp and /magiclink make through it): there
 * the original answers any failure of the hook with its own 500 "Error invoking hook" (the user stays, its
 * mail sent), where every other route answers the hook's error itself (docs/hooks.md#after-user-created).
 */
export async function announceSignUp(req: HookRequest, ctx: AppContext): Promise<void> {
  try {
    await announceCreatedUsers(req, ctx);
  } catch (err) {
    throw apiError('hook_after_sign_up_failed').causedBy(err);
  }
}

async function tellHook(ids: string[], req: HookRequest, ctx: AppContext): Promise<void> {
  for (const id of new Set(ids)) {
    const user = await findUserById(ctx.db, id);
    if (!user) continue;
    await invokeHook(ctx, 'afterUserCreated', { user: userJson(user, await findIdentitiesByUser(ctx.db, id)) }, req, noOutput);
  }
}
