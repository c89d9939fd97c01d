// Settings that become a timer here (a timeout, an interval, a connection's lifetime) are held to the
// longest one Node.js and PostgreSQL keep: 2^31 − 1 ms, 24.8 days. Past it Node fires a timer after 1 ms
// (so DB_ACQUIRE_TIMEOUT=1000h refused every request at once) and PostgreSQL refuses the session's
// statement_timeout (every connection failed). The original, whose Go timers run for centuries, starts with
// such values; so does this service, reading them as that longest wait, with a start-up warning.
import { variableOf } from './cross-field.js';

const LONGEST_TIMER_MS = 2 ** 31 - 1;
const LONGEST_TIMER_SECONDS = Math.floor(LONGEST_TIMER_MS / 1000);

/** Duration settings, in seconds, that arm a timer or a PostgreSQL timeout. */
const TIMER_SECONDS = [
  'API_MAX_REQUEST_DURATION',
  'DB_CONN_MAX_IDLE_TIME',
  'DB_CONN_MAX_LIFETIME',
  'DB_ACQUIRE_TIMEOUT',
  'DB_STATEMENT_TIMEOUT',
  'DB_IDLE_IN_TRANSACTION_TIMEOUT',
  'DB_ADVISOR_SAMPLING_INTERVAL',
  'DB_ADVISOR_OBSERVATION_INTERVAL',
  'INTERNAL_HTTP_TIMEOUT',
  'SEND_TIMEOUT',
  'SECURITY_CAPTCHA_TIMEOUT',
  'RELOADING_POLLER_INTERVAL',
  'RELOADING_GRACE_PERIOD_INTERVAL',
  'MAILER_TEMPLATE_MAX_AGE',
  'MAILER_TEMPLATE_RETRY_INTERVAL',
  'EXTERNAL_OIDC_PROVIDER_CACHE_TTL',
] as const;

/** Corrects `flat` in place; one warning per setting read as the longest timer. */
export function heldToTimerLimits(flat: Record<string, unknown>, given: Map<string, string>): string[] {
  const warnings: string[] = [];
  for (const name of TIMER_SECONDS) {
    const seconds = flat[name] as number;
    if (!(seconds > LONGEST_TIMER_SECONDS)) continue;
    flat[name] = LONGEST_TIMER_SECONDS;
    warnings.push(
      `${variableOf(given, name)}: ${seconds} s is longer than the longest timer kept here; read as ${LONGEST_TIMER_SECONDS} s (24.8 days)`,
    );
  }
  const interval = flat.OTEL_METRIC_EXPORT_INTERVAL as number;
  if (interval > LONGEST_TIMER_MS) {
    flat.OTEL_METRIC_EXPORT_INTERVAL = LONGEST_TIMER_MS;
    warnings.push(
      `${variableOf(given, 'OTEL_METRIC_EXPORT_INTERVAL')}: ${interval} ms is longer than the longest timer kept here; read as ${LONGEST_TIMER_MS} ms`,
    );
  }
  return warnings;
}
