// The session limits (docs/tokens-and-sessions.md#session-limits): SESSIONS_TIMEBOX,
// SESSIONS_INACTIVITY_TIMEOUT, SESSIONS_ALLOW_LOW_AAL, SESSIONS_SINGLE_PER_USER with SESSIONS_TAGS. The
// database decides whether a session has ended (sql/00005_session_policy_and_cleanup.sql,
// sql/00007_session_low_aal.sql), inside the statements the refresh grant and the bearer checks already
// run; this module turns the settings into those statements' parameters.
import type { Config } from '../config/types.js';
import type { SessionPolicy } from '../../db/sessions.js';

export type { SessionEnd, SessionPolicy } from '../../db/sessions.js';

const policies = new WeakMap<Config['sessions'], SessionPolicy | null>();

/** The policy, or null when no limit is set: the hot statements then run exactly as without this feature. */
export function sessionPolicy(config: Config): SessionPolicy | null {
  const settings = config.sessions;
  let policy = policies.get(settings);
  if (policy === undefined) {
    const { timeboxSeconds, inactivityTimeoutSeconds, allowLowAalSeconds, singlePerUser, tags } = settings;
    policy =
      timeboxSeconds > 0 || inactivityTimeoutSeconds > 0 || allowLowAalSeconds > 0 || singlePerUser
        ? {
            timeboxSeconds: timeboxSeconds || null,
            inactivitySeconds: inactivityTimeoutSeconds || null,
            lowAalSeconds: allowLowAalSeconds || null,
            singlePerUser,
            tags,
          }
        : null;
    policies.set(settings, policy);
  }
  return policy;
}
