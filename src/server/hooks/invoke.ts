// Running one hook: the payload gets the original's metadata, goes to the configured transport, and the
// outcome is logged with its duration. Each hook module (custom-access-token.ts, …) builds its payload and
// reads its answer; this file knows nothing of what a hook means (docs/hooks.md).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import type { HookName } from '../config/types.js';
import type { AppContext } from '../context.js';
import { ApiError } from '../errors.js';
import { callHttpHook } from './http-transport.js';
import { callPgHook } from './pg-transport.js';
import { hookTarget } from './targets.js';

/** The original's hook names, sent in metadata.name (internal/hooks/v0hooks). */
export const WIRE_NAMES: Record<HookName, string> = {
  customAccessToken: 'customize-access-token',
  beforeUserCreated: 'before-user-created',
  sendEmail: 'send-email',
  sendSms: 'send-sms',
  passwordVerificationAttempt: 'password-verification',
  mfaVerificationAttempt: 'mfa-verification',
  afterUserCreated: 'after-user-created',
};

/**
 * What a hook call, or a mail sent for the request, may know of it: the client's address for metadata,
 * the deadline, and the headers that choose the base of mail links (delivery/mail/link-base.ts).
 */
export interface HookRequest {
  ip?: string;
  signal?: AbortSignal;
  headers?: Readonly<Record<string, string>>;
}

export function hookEnabled(ctx: Pick<AppContext, 'config'>, hook: HookName): boolean {
  return ctx.config.hooks[hook].enabled;
}

/** An enabled hook that is no Postgres function: its call waits on the network, not on the caller's connection. */
export function hookCallsOverHttp(ctx: Pick<AppContext, 'config'>, hook: HookName): boolean {
  return hookEnabled(ctx, hook) && !ctx.config.hooks[hook].uri.startsWith('pg-functions:');
}

/**
 * Calls `hook` with `payload` (plus metadata) and resolves its answer as `decode` reads it (answer.ts; the
 * answer is NO_ANSWER when the hook gave none). A decoding failure is the call's, logged as the original does.
 * `q`: the request's transaction client when it holds one, so a Postgres function runs on it (pg-transport.ts).
 */
export async function invokeHook<T>(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  hook: HookName,
  payload: Record<string, unknown>,
  req: HookRequest,
  decode: (answer: unknown) => T,
  q?: Queryable,
): Promise<T> {
  const settings = ctx.config.hooks[hook];
  const target = hookTarget(settings.uri, settings.secrets);
  const body = JSON.stringify({
    metadata: { uuid: randomUUID(), time: new Date().toISOString(), name: WIRE_NAMES[hook], ...(req.ip ? { ip_address: req.ip } : {}) },
    ...payload,
  });
  const started = performance.now();
  const where = loggable(settings.uri);
  const log = (success: boolean, err?: unknown) =>
    ctx.log[success ? 'info' : 'warn'](
      { action: 'run_hook', hook: where, success, duration_ms: Math.round(performance.now() - started), ...(err ? { err } : {}) },
      success ? 'Hook ran successfully' : 'Hook errored out',
    );
  try {
    const output =
      target.kind === 'http'
        ? await callHttpHook({
            url: target.url,
            secrets: target.secrets,
            authorization: target.authorization,
            payload: body,
            signal: req.signal,
          })
        : await callPgHook({
            pool: ctx.db,
            q,
            qualifiedName: target.qualifiedName,
            uri: settings.uri,
            payload: body,
            signal: req.signal,
            onFailure: (err) => ctx.log.warn({ err, hook: where }, 'hook function failed'),
          });
    const decoded = decode(output);
    log(true);
    return decoded;
  } catch (err) {
    log(false, err instanceof ApiError ? { code: err.errorCode, message: err.message } : err);
    throw err;
  }
}

/** The URI without credentials or query (an endpoint may carry a key there), for the log. */
function loggable(uri: string): string {
  const u = new URL(uri);
  return u.protocol === 'pg-functions:' ? uri : `${u.origin}${u.pathname}`;
}
