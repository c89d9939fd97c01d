// What the background cleanup removes, and after how long (docs/tokens-and-sessions.md#cleanup): one task
// per kind of row, each a batch statement of src/db/cleanup.ts with its age taken from the settings.
// Every age adds DB_CLEANUP_GRACE to the point where a row stops being usable, so a client presenting it
// a little late still gets the precise error (already used, expired) rather than "not found".
import type { Queryable } from '../../db/pool.js';
import {
  deleteExpiredFlowStates,
  deleteExpiredOneTimeTokens,
  deleteOldAuditEntries,
  deleteRevokedRefreshTokens,
  deleteSessionsPastNotAfter,
  deleteSessionsPastPolicy,
  deleteSpentWeb3Messages,
} from '../../db/cleanup.js';
import { sessionPolicy } from '../sessions/policy.js';
import type { Config } from '../config/types.js';

export interface CleanupTask {
  /** the table rows are removed from: the label of the log line and of the metric */
  table: 'refresh_tokens' | 'sessions' | 'flow_state' | 'one_time_tokens' | 'web3_message_uses' | 'audit_log_entries';
  /** rows per statement */
  limit: number;
  run(q: Queryable, limit: number): Promise<number>;
}

export function cleanupTasks(config: Config): CleanupTask[] {
  const { batchSize, graceSeconds: grace, auditLogRetentionSeconds } = config.db.cleanup;
  // A session's delete cascades to its refresh tokens and AMR claims: fewer sessions per statement.
  const sessionBatch = Math.max(1, Math.ceil(batchSize / 10));
  // A revoked token stays while it may still be answered (the reuse interval), and the grace after.
  const tokenAge = config.security.refreshTokenReuseIntervalSeconds + grace;
  const otpLifetime = Math.max(config.mailer.otpExpSeconds, config.sms.otpExpSeconds);
  const policy = sessionPolicy(config);
  const tasks: CleanupTask[] = [
    { table: 'refresh_tokens', limit: batchSize, run: (q, n) => deleteRevokedRefreshTokens(q, tokenAge, n) },
    { table: 'sessions', limit: sessionBatch, run: (q, n) => deleteSessionsPastNotAfter(q, grace, n) },
    { table: 'flow_state', limit: batchSize, run: (q, n) => deleteExpiredFlowStates(q, config.external.flowStateExpirySeconds + grace, n) },
    { table: 'one_time_tokens', limit: batchSize, run: (q, n) => deleteExpiredOneTimeTokens(q, otpLifetime + grace, n) },
    { table: 'web3_message_uses', limit: batchSize, run: (q, n) => deleteSpentWeb3Messages(q, grace, n) },
  ];
  if (policy && (policy.timeboxSeconds || policy.inactivitySeconds)) {
    tasks.push({ table: 'sessions', limit: sessionBatch, run: (q, n) => deleteSessionsPastPolicy(q, policy, grace, n) });
  }
  // 0: audit entries are kept for ever, as the original keeps them.
  if (auditLogRetentionSeconds > 0) {
    tasks.push({ table: 'audit_log_entries', limit: batchSize, run: (q, n) => deleteOldAuditEntries(q, auditLogRetentionSeconds, n) });
  }
  return tasks;
}
