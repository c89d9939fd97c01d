// pino, configured once from Config.log. Secrets never reach a log line: the redact list covers the
// places a request's credentials could be copied into a log object.
import { pino, type Logger } from 'pino';
import { createRequire } from 'node:module';
import type { Config } from '../config/types.js';
import { SECRET_HEADERS, SECRET_KEYS } from './secret-keys.js';

const LEVELS: Record<Config['log']['level'], pino.Level> = {
  panic: 'fatal',
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
};

// Credentials never reach a log line: request lines carry no body and a masked query (secret-keys.ts);
// the paths below, built from the same names, catch the places an error or a debug object could carry
// one. Explicit paths only: pino's wildcard redaction costs a measurable share of a cheap request
// (bench: settings).
const REDACT = [
  ...SECRET_KEYS,
  ...SECRET_KEYS.map((k) => `body.${k}`),
  'body.gotrue_meta_security.captcha_token',
  ...SECRET_HEADERS.map((h) => `headers["${h}"]`),
];

/**
 * JSON lines shaped as the original writes them (logrus): `level` by name, "warning" for pino's warn,
 * `time` as an RFC 3339 string in UTC, not pino's numbers, and a logged error's message as `error` (beside
 * pino's `err` with its stack). Collectors set up for the original read them unchanged: Supabase's own
 * (Vector into Logflare) takes `time` as the event's timestamp, and its Studio selects and filters auth
 * logs by `level` and shows `error` (docs/observability.md#logs).
 */
export const LOGRUS_SHAPE = {
  formatters: {
    level: (label: string) => ({ level: label === 'warn' ? 'warning' : label }),
    log: (fields: Record<string, unknown>) =>
      fields.err instanceof Error && fields.error === undefined ? { ...fields, error: fields.err.message } : fields,
  },
  timestamp: isoTimeOfThisMillisecond,
} satisfies pino.LoggerOptions;

let lastMillisecond = -1;
let lastTimeField = '';
/**
 * pino's isoTime, made once per millisecond: a busy thread writes several lines within one, and building
 * a Date and its string per line was a visible share of a cheap request's log line (bench/README.md).
 */
function isoTimeOfThisMillisecond(): string {
  const now = Date.now();
  if (now !== lastMillisecond) {
    lastMillisecond = now;
    lastTimeField = `,"time":"${new Date(now).toISOString()}"`;
  }
  return lastTimeField;
}

/**
 * Pretty (pino-pretty) lines only where a person reads them: the development setup, on a terminal, with
 * no LOG_FILE. Everywhere else the JSON lines stay, for whatever collects them.
 */
export function prettyLogsWanted(config: Pick<Config, 'development' | 'log'>, stdoutIsTty: boolean): boolean {
  return config.development && stdoutIsTty && !config.log.file;
}

export function createLogger(config: Config['log'], bindings: Record<string, unknown> = {}, options: { pretty?: boolean } = {}): Logger {
  if (options.pretty) {
    // Synchronous, as the JSON destination below: a line is on the terminal before the next statement runs.
    // Loaded only here: production threads never pay for pino-pretty's import.
    const pretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
    const stream = pretty({ colorize: true, sync: true, destination: 1, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' });
    const logger = pino(prettyOptions(LEVELS[config.level], { component: 'api', ...bindings }), stream);
    PRETTY.add(logger);
    return logger;
  }
  // Buffered: one write(2) per ~4 KiB of lines (~16 request lines) instead of one per request. Written
  // synchronously from the calling thread: the asynchronous mode handed every 4 KiB to libuv's threadpool
  // (which the argon2 hashes also run on) and back through the event loop, and cost the HTTP thread more
  // CPU than the write itself (bench/README.md). A destination that stalls (a full pipe) blocks the
  // thread instead of growing a queue, as pino's own default does. Buffered lines are flushed at least
  // every FLUSH_INTERVAL_MS, so a quiet service's lines (its start-up among them) still show up promptly,
  // and at exit.
  const destination = pino.destination({ dest: config.file || 1, append: true, mkdir: !!config.file, sync: true, minLength: 4096 });
  const logger = pino(jsonOptions(LEVELS[config.level], { component: 'api', ...bindings }), destination);
  const flush = () => {
    try {
      logger.flush();
    } catch {
      /* the destination was closed at exit: nothing is left to write */
    }
  };
  setInterval(flush, FLUSH_INTERVAL_MS).unref();
  // And when the process (or this thread) ends, so the last lines — a stop's own — are not lost; the
  // writes are synchronous, so this works in an 'exit' handler.
  process.once('exit', flush);
  return logger;
}

const prettyOptions = (level: pino.LevelWithSilentOrString, base: Record<string, unknown>): pino.LoggerOptions => ({
  level,
  base,
  redact: { paths: REDACT, censor: '[redacted]' },
});
const jsonOptions = (level: pino.LevelWithSilentOrString, base: Record<string, unknown>): pino.LoggerOptions => ({
  ...LOGRUS_SHAPE,
  ...prettyOptions(level, base),
});
/** Loggers writing to a terminal through pino-pretty, so that their component loggers do too. */
const PRETTY = new WeakSet<Logger>();

/**
 * A logger for another `component` (the original's `sql` lines) at `parent`'s level, with its other
 * fields, writing through its destination, so lines keep their order and share its buffer. A pino child
 * can only add fields: a second `component` would put the key in the line twice.
 */
export function componentLogger(parent: Logger, component: string): Logger {
  const destination = (parent as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  const options = PRETTY.has(parent) ? prettyOptions : jsonOptions;
  return pino(options(parent.level, { ...parent.bindings(), component }), destination);
}

/** The longest a written line waits in the buffer. */
export const FLUSH_INTERVAL_MS = 1000;

export type { Logger };
