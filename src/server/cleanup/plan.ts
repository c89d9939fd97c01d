// What the background cleanup removes, and after how long (docs/tokens-and-sessions.md#cleanup): one task
// per kind of row, each a batch statement of src/db/cleanup.ts with its age taken from the settings.
// Every age adds DB_CLEANUP_GRACE to the point where a row stops being usable, so a client presenting it
// a little late still gets the precise error (already used, expired) rather than "not found".
import type { Queryable } from '../../db/pool.js';
import {
  deleteExpiredFlowStates,
  deleteExpiredOneTimeTokens,
  deleteOldAnonymousUsers,
  deleteOldAuditEntries,
  deleteOldMfaChallenges,
  deleteStaleUnverifiedFactors,
  deleteRevokedRefreshTokens,
  deleteSessionsPastNotAfter,
  deleteSessionsPastPolicy,
  deleteSpentWeb3Messages,
  deleteExpiredOAuthAuthorizations,
  deleteOldRelayStates,
  deleteSpentSamlAssertions,
  deleteOldPretendedSends,
  deleteRefilledBuckets,
} from '../../db/cleanup.js';
import { refilledAfter } from '../limits/per-client.js';
import { auditPayload } from '../../db/audit-log.js';
import { sessionPolicy } from '../sessions/policy.js';
import type { Config } from '../config/types.js';

export interface CleanupTask {
  /** the table rows are removed from: the label of the log line and of the metric */
  table:
    | 'refresh_tokens'
    | 'sessions'
    | 'flow_state'
    | 'one_time_tokens'
    | 'web3_message_uses'
    | 'oauth_authorizations'
    | 'saml_relay_states'
    | 'saml_assertion_uses'
    | 'mfa_challenges'
    | 'mfa_factors'
    | 'users'
    | 'audit_log_entries'
    | 'rate_limits';
  /** rows per statement */
  limit: number;
  run(q: Queryable, limit: number): Promise<number>;
}

/** How long an anonymous user is kept after signing up: the original's 30 days. */
const ANONYMOUS_USER_LIFETIME = 30 * 86400;

/** Who the audit log names for the cleanup's deletions: the zero UUID, as for an admin, and the cleanup's name. */
const CLEANUP_ACTOR = { id: '00000000-0000-0000-0000-000000000000', username: 'portcullis_cleanup' };

export function cleanupTasks(config: Config): CleanupTask[] {
  const { batchSize, graceSeconds: grace, auditLogRetentionSeconds } = config.db.cleanup;
  // A session's delete cascades to its refresh tokens and AMR claims: fewer sessions per statement.
  const sessionBatch = Math.max(1, Math.ceil(batchSize / 10));
  // A revoked token stays while it may still be answered (the reuse interval), and the grace after.
  const tokenAge = config.security.refreshTokenReuseIntervalSeconds + grace;
  const otpLifetime = Math.max(config.mailer.otpExpSeconds, config.sms.otpExpSeconds);
  // A challenge can be answered for MFA_CHALLENGE_EXPIRY_DURATION. An unverified factor is usable while one
  // of its challenges can be, and, never challenged, for MFA_FACTOR_EXPIRY_DURATION (after which each
  // enrolment sweeps it too, docs/mfa.md).
  const challengeAge = config.mfa.challengeExpirySeconds + grace;
  const pretendedSendAge = Math.max(config.smtp.maxFrequencySeconds, config.sms.maxFrequencySeconds) + grace;
  const refillAges = refilledAfter(config.rateLimit);
  const policy = sessionPolicy(config);
  const tasks: CleanupTask[] = [
    { table: 'refresh_tokens', limit: batchSize, run: (q, n) => deleteRevokedRefreshTokens(q, tokenAge, n) },
    { table: 'sessions', limit: sessionBatch, run: (q, n) => deleteSessionsPastNotAfter(q, grace, n) },
    { table: 'flow_state', limit: batchSize, run: (q, n) => deleteExpiredFlowStates(q, config.external.flowStateExpirySeconds + grace, n) },
    { table: 'one_time_tokens', limit: batchSize, run: (q, n) => deleteExpiredOneTimeTokens(q, otpLifetime + grace, n) },
    { table: 'web3_message_uses', limit: batchSize, run: (q, n) => deleteSpentWeb3Messages(q, grace, n) },
    { table: 'oauth_authorizations', limit: batchSize, run: (q, n) => deleteExpiredOAuthAuthorizations(q, grace, n) },
    {
      table: 'saml_relay_states',
      limit: batchSize,
      run: (q, n) => deleteOldRelayStates(q, config.saml.relayStateValiditySeconds + grace, n),
    },
    { table: 'saml_assertion_uses', limit: batchSize, run: (q, n) => deleteSpentSamlAssertions(q, grace, n) },
    { table: 'mfa_challenges', limit: batchSize, run: (q, n) => deleteOldMfaChallenges(q, challengeAge, n) },
    // A pretended send refuses repeats for the longest send interval (limits/pretended-sends.ts); removed
    // sooner, an unknown address would be free again while a known one is still refused.
    { table: 'rate_limits', limit: batchSize, run: (q, n) => deleteOldPretendedSends(q, pretendedSendAge, n) },
    // A per-client bucket is full again once its refill time has passed since its last take; its row then
    // answers as no row does. Not the shared send counters (keys without a bucket's prefix).
    { table: 'rate_limits', limit: batchSize, run: (q, n) => deleteRefilledBuckets(q, refillAges, n) },
    {
      table: 'mfa_factors',
      limit: batchSize,
      run: (q, n) => deleteStaleUnverifiedFactors(q, config.mfa.factorExpirySeconds + grace, challengeAge, n),
    },
  ];
  // As the original: anonymous users go 30 days after signing up, whether or not they still use the
  // account, and only while anonymous sign-ins are enabled. A user's delete cascades: a session's batch.
  if (config.external.anonymousUsersEnabled) {
    const audit = auditPayload(CLEANUP_ACTOR, 'user_deleted');
    tasks.push({ table: 'users', limit: sessionBatch, run: (q, n) => deleteOldAnonymousUsers(q, ANONYMOUS_USER_LIFETIME, n, audit) });
  }
  if (policy && (policy.timeboxSeconds || policy.inactivitySeconds)) {
    tasks.push({ table: 'sessions', limit: sessionBatch, run: (q, n) => deleteSessionsPastPolicy(q, policy, grace, n) });
  }
  // 0: audit entries are kept for ever, as the original keeps them.
  if (auditLogRetentionSeconds > 0) {
    tasks.push({ table: 'audit_log_entries', limit: batchSize, run: (q, n) => deleteOldAuditEntries(q, auditLogRetentionSeconds, n) });
  }
  return tasks;
}
