// A real pino logger whose lines are kept in memory, so tests can assert what was logged.
import { pino, type Logger } from 'pino';
import { LOGRUS_SHAPE } from '../../dist/server/observability/log.js';

export interface CapturedLog {
  log: Logger;
  lines: Array<Record<string, unknown> & { level: string; msg: string }>;
}

export function captureLog(): CapturedLog {
  const lines: CapturedLog['lines'] = [];
  const log = pino({ ...LOGRUS_SHAPE, level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

/** the levels as the service's lines name them (observability/log.ts: the original's names) */
export const LEVEL = { debug: 'debug', info: 'info', warn: 'warning', error: 'error', fatal: 'fatal' } as const;

/** the messages of the lines logged at error level or worse: a service that answered well logs none */
export function errorMessages(lines: ReadonlyArray<Record<string, unknown>>): unknown[] {
  return lines.filter((line) => ['error', 'fatal', 'panic'].includes(line.level as string)).map((line) => line.msg);
}
