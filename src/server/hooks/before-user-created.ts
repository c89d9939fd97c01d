// The before-user-created hook (docs/hooks.md#before-user-created): the user about to be inserted goes out
// before anything is written, so a hook that refuses (its {"error": …}, or any failure) leaves no row.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import type { AppContext } from '../context.js';
import { userJson } from '../users/user-json.js';
import { createUser, newUserRow, type NewUser } from '../users/create.js';
import { noOutput } from './answer.js';
import { hookCallsOverHttp, hookEnabled, invokeHook, type HookRequest } from './invoke.js';
import { noteUserCreated } from './after-user-created.js';
import { storedPasswordHash } from '../users/password-at-rest.js';

/** Resolves when the hook is off or lets the sign-up go ahead; throws its refusal otherwise. */
export async function beforeUserCreated(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  user: UserRow,
  req: HookRequest,
  q?: Queryable,
): Promise<void> {
  if (!hookEnabled(ctx, 'beforeUserCreated')) return;
  await invokeHook(ctx, 'beforeUserCreated', { user: userJson(user, []) }, req, noOutput, q);
}

/**
 * The users an HTTP hook let a request create, by what was asked, with the id it was shown. A transaction that
 * sends (sendingTx) may run again from the start to take a send permit; its second run creates the same user
 * with the same id without asking again, so the endpoint is called once per sign-up, as the original calls it,
 * and never about an id that is then thrown away. A Postgres hook runs inside the transaction, so a run that
 * rolled back also undid it: it is asked again.
 */
const approvedBy = new WeakMap<HookRequest, Map<string, string>>();

/** createUser (users/create.ts) after the hook let it go ahead; the same id in the payload and the row. */
export async function createUserAfterHook(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  q: Queryable,
  u: NewUser,
  req: HookRequest,
): Promise<Awaited<ReturnType<typeof createUser>>> {
  const asked = JSON.stringify(u);
  const approved = approvedBy.get(req)?.get(asked);
  const withId = { ...u, id: u.id ?? approved ?? randomUUID() };
  if (approved === undefined) {
    await beforeUserCreated(ctx, newUserRow(withId), req, q);
    if (hookCallsOverHttp(ctx, 'beforeUserCreated')) {
      if (!approvedBy.has(req)) approvedBy.set(req, new Map());
      approvedBy.get(req)!.set(asked, withId.id);
    }
  }
  const passwordHash = withId.passwordHash && storedPasswordHash(ctx.config, withId.id, withId.passwordHash);
  const result = await createUser(q, { ...withId, passwordHash });
  if (result) noteUserCreated(ctx, req, result.user);
  return result;
}
