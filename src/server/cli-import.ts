// `portcullis import` (docs/adopting-gotrue.md#importing-users): users, their password hashes, identities
// and metadata from a JSON Lines file or from a live database of the original service, in batches, with a
// progress line per batch. Idempotent by user id, so an interrupted import is resumed by running it again
// (`--after <id>` skips the part of a database already read). Exit status 1 when any record was refused.
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { migrate } from '../db/migrate.js';
import { createPool } from '../db/pool.js';
import { writeBatch } from '../db/import-users.js';
import { withCommandDatabase } from './cli-database.js';
import { RecordError, toImportedUser, type ImportedUser } from './import/records.js';
import { fromGotrueDatabase, fromJsonLines, type SourceRecord } from './import/sources.js';
import type { Config } from './config/types.js';
import { secretBox } from './mfa/encryption.js';

export const IMPORT_USAGE =
  'usage: portcullis import (--file users.jsonl | --from-database postgres://... [--from-namespace auth] [--after <user id>]) [--batch 500]';

export async function importCommand(config: Config, log: Logger, args: string[]): Promise<number> {
  const options = parseImportArgs(args);
  if (!options) {
    console.error(IMPORT_USAGE);
    return 2;
  }
  return withCommandDatabase(config, log, async (url) => {
    await migrate(url, config.db.namespace, (m) => log.info(m), {
      sealSecret: (rowId, stored) => secretBox(config).sealIfClear(rowId, stored),
    });
    const pool = createPool({ url, max: 1, namespace: config.db.namespace, applicationName: 'portcullis_import' });
    try {
      const source = options.file
        ? fromJsonLines(options.file, options.batch)
        : fromGotrueDatabase(options.database!, options.namespace, options.batch, options.after);
      return await runImport(pool, source);
    } finally {
      await pool.end();
    }
  });
}

interface ImportOptions {
  file?: string;
  database?: string;
  namespace: string;
  after?: string;
  batch: number;
}

function parseImportArgs(args: string[]): ImportOptions | null {
  try {
    const { values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        file: { type: 'string' },
        'from-database': { type: 'string' },
        'from-namespace': { type: 'string', default: 'auth' },
        after: { type: 'string' },
        batch: { type: 'string', default: '500' },
      },
    });
    const batch = Number(values.batch);
    const database = values['from-database'];
    if (positionals.length > 0 || !(values.file ? !database : database) || !Number.isInteger(batch) || batch < 1 || batch > 10_000)
      return null;
    if (values.after && !database) return null;
    return { file: values.file, database, namespace: String(values['from-namespace']), after: values.after, batch };
  } catch {
    return null;
  }
}

async function runImport(pool: Parameters<typeof writeBatch>[0], source: AsyncGenerator<SourceRecord[]>): Promise<number> {
  const totals = { read: 0, imported: 0, present: 0, refused: 0 };
  for await (const batch of source) {
    const users: ImportedUser[] = [];
    for (const record of batch) {
      totals.read += 1;
      try {
        if (record.error) throw new RecordError(record.error);
        users.push(toImportedUser(record.value));
      } catch (err) {
        if (!(err instanceof RecordError)) throw err;
        totals.refused += 1;
        console.error(`${record.at}: refused: ${err.message}`);
      }
    }
    const outcome = await writeBatch(pool, users);
    totals.imported += outcome.imported;
    totals.present += outcome.present;
    totals.refused += outcome.conflicts.length;
    for (const c of outcome.conflicts) console.error(`user ${c.id}: refused: ${c.reason}`);
    const last = batch.at(-1)?.at ?? '';
    console.log(
      `progress: ${totals.read} read, ${totals.imported} imported, ${totals.present} already present, ${totals.refused} refused (last: ${last})`,
    );
  }
  console.log(`done: ${totals.imported} imported, ${totals.present} already present, ${totals.refused} refused`);
  return totals.refused > 0 ? 1 : 0;
}
