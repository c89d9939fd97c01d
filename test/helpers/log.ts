// A real pino logger whose lines are kept in memory, so tests can assert what was logged.
import { pino, type Logger } from 'pino';

export interface CapturedLog {
  log: Logger;
  lines: Array<Record<string, unknown> & { level: number; msg: string }>;
}

export function captureLog(): CapturedLog {
  const lines: CapturedLog['lines'] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, lines };
}

/** pino's numeric levels, for readable assertions */
export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50 } as const;
