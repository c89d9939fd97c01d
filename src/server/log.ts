// pino, configured once from Config.log. Secrets never reach a log line: the redact list covers the
// places a request's credentials could be copied into a log object.
import { pino, type Logger } from 'pino';
import type { Config } from './config-types.js';

const LEVELS: Record<Config['log']['level'], pino.Level> = {
  panic: 'fatal', fatal: 'fatal', error: 'error', warn: 'warn', info: 'info', debug: 'debug',
};

const REDACT = [
  'authorization', 'password', 'token', 'access_token', 'refresh_token', 'nonce', 'code_verifier',
  '*.authorization', '*.password', '*.token', '*.access_token', '*.refresh_token', '*.nonce', '*.code_verifier',
  'headers.authorization', 'headers.cookie', 'headers.apikey',
];

export function createLogger(config: Config['log'], bindings: Record<string, unknown> = {}): Logger {
  const destination = config.file ? pino.destination({ dest: config.file, append: true, mkdir: true, sync: false }) : pino.destination(1);
  return pino({ level: LEVELS[config.level], base: { component: 'api', ...bindings }, redact: { paths: REDACT, censor: '[redacted]' } }, destination);
}

/** Query parameters whose values are credentials; their values are masked in logged URLs. */
const SECRET_PARAMS = /((?:^|[?&])(?:token|token_hash|code|refresh_token|access_token|nonce)=)[^&]*/gi;
export const maskQuery = (query: string) => query.replace(SECRET_PARAMS, '$1[redacted]');

export type { Logger };
