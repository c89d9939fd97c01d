// pino, configured once from Config.log. Secrets never reach a log line: the redact list covers the
// places a request's credentials could be copied into a log object.
import { pino, type Logger } from 'pino';
import type { Config } from './config-types.js';

const LEVELS: Record<Config['log']['level'], pino.Level> = {
  panic: 'fatal', fatal: 'fatal', error: 'error', warn: 'warn', info: 'info', debug: 'debug',
};

// Credentials never reach a log line: request lines carry no body and a masked query; the paths below
// catch the places an error or a debug object could carry one. Explicit paths only: pino's wildcard
// redaction costs a measurable share of a cheap request (bench: settings).
const REDACT = [
  'authorization', 'password', 'token', 'access_token', 'refresh_token', 'nonce', 'code_verifier',
  'headers.authorization', 'headers.cookie', 'headers.apikey', 'body.password', 'body.refresh_token',
];

export function createLogger(config: Config['log'], bindings: Record<string, unknown> = {}): Logger {
  // Buffered, asynchronous writes: one write(2) per ~4 KiB of lines instead of one per request. Threads
  // flush on every orderly exit path (workers/http.ts), so a stop loses nothing.
  const destination = pino.destination({ dest: config.file || 1, append: true, mkdir: !!config.file, sync: false, minLength: 4096 });
  return pino({ level: LEVELS[config.level], base: { component: 'api', ...bindings }, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}

/** Query parameters whose values are credentials; their values are masked in logged URLs. */
const SECRET_PARAMS = /((?:^|[?&])(?:token|token_hash|code|refresh_token|access_token|nonce)=)[^&]*/gi;
export const maskQuery = (query: string) => query.replace(SECRET_PARAMS, '$1[redacted]');

export type { Logger };
