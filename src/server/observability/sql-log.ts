// LOG_SQL (docs/observability.md#sql-statements): every statement a pool sends, as an `info` line of the
// component `sql`, the way the original's database layer logs them; with `all`, its values as `args`.
import type { Logger } from 'pino';
import type { StatementLogger } from '../../db/client.js';
import type { Config } from '../config/types.js';
import { componentLogger } from './log.js';

export function statementLogger(log: Logger, mode: Config['log']['sql']): StatementLogger | undefined {
  if (mode === 'none') return undefined;
  const sql = componentLogger(log, 'sql');
  if (mode === 'statement') return (text) => sql.info(oneLine(text));
  return (text, values) => (values?.length ? sql.info({ args: values }, oneLine(text)) : sql.info(oneLine(text)));
}

/** Statements are written over several indented lines in the source; a log line holds them on one. */
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
