// Everything a handler may use, built once per HTTP thread (build-context.ts) and handed to every request.
// Types only: importing this module pulls in no code, so no import cycle runs through the context.
import type { MessagePort } from 'node:worker_threads';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from './config/types.js';
import type { PasswordHasher } from './crypto/pool.js';
import type { JwtService } from './auth/jwt.js';
import type { Mailer } from './delivery/mail/mailer.js';
import type { SmsSender } from './delivery/sms/index.js';
import type { RedirectCheck } from './http/redirect-target.js';
import type { RequestMetrics } from './observability/metrics.js';
import type { Tracing } from './observability/tracing.js';
import type { SendTiming } from './delivery/send-timing.js';
import type { SendingSlots } from './delivery/sending-slots.js';
import type { PwnedPasswords } from './users/pwned-passwords.js';

export interface AppContext {
  config: Config;
  log: Logger;
  db: pg.Pool;
  hasher: PasswordHasher;
  jwt: JwtService;
  mailer: Mailer;
  /** null when no SMS gateway is configured (and not in development) */
  sms: SmsSender | null;
  /** the validated redirect target for a requested redirect_to */
  redirect: RedirectCheck;
  metrics: RequestMetrics;
  tracing: Tracing;
  /** how long sends take lately, so that requests with nothing to send answer as late */
  sendTiming: SendTiming;
  /** how many sending transactions may be open at once on `db` (delivery/sending-slots.ts) */
  sendingSlots: SendingSlots;
  /**
   * how many sign-in transactions may wait at once on a hook or KMS (sessions/issue.ts issuingTx); apart
   * from the sending slots, so a stalled relay stops no sign-in
   */
  hookSlots: SendingSlots;
  /** the leaked-password check; null unless PASSWORD_HIBP_ENABLED */
  pwned: PwnedPasswords | null;
}

export interface AppResources {
  databaseUrl: string;
  poolSize: number;
  /** idle connections the pool keeps (DB_MAX_IDLE_POOL_SIZE's share); absent: no cap */
  maxIdle?: number;
  cryptoPort: MessagePort;
  /** This HTTP thread's number, the `thread` label of its database pool metrics. */
  index?: number;
  /**
   * One Int32 shared by every HTTP thread (SharedArrayBuffer): 1 while trace exports fail. Each thread
   * flips it atomically, so a collector that is down is logged once per process, not once per thread.
   */
  traceExportFailing?: Int32Array;
}
