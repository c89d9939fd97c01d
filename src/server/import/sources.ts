// Where imported users come from (docs/adopting-gotrue.md#importing-users), read in batches so memory
// stays flat whatever the number of users: a JSON Lines file (one user per line), or the users and
// identities tables of a live database the original service uses (read only, in id order).
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { pgConnection } from '../../db/database-url.js';
import { assertNamespace } from '../../db/namespace.js';

/** A source record with where it came from, for progress and error messages. */
export interface SourceRecord {
  /** "line 12" or "user <id>" */
  at: string;
  /** the parsed record, or the reason it could not be parsed */
  value: unknown;
  error?: string;
}

export async function* fromJsonLines(file: string, batchSize: number): AsyncGenerator<SourceRecord[]> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let batch: SourceRecord[] = [];
  let n = 0;
  for await (const line of lines) {
    n += 1;
    if (line.trim() === '') continue;
    try {
      batch.push({ at: `line ${n}`, value: JSON.parse(line) });
    } catch {
      batch.push({ at: `line ${n}`, value: null, error: 'not valid JSON' });
    }
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * Pages through <namespace>.users by id, each user with its identities as JSON. `after` resumes after a
 * user id a previous run reported. The original's '' values are normalised by toImportedUser.
 */
export async function* fromGotrueDatabase(
  url: string,
  namespace: string,
  batchSize: number,
  after?: string,
): AsyncGenerator<SourceRecord[]> {
  assertNamespace(namespace);
  const { config, Client } = pgConnection(url);
  const client = new Client({ application_name: 'portcullis_import', ...config, statement_timeout: 60_000 });
  await client.connect();
  try {
    let last = after ?? '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const { rows } = await client.query<{ record: { id: string } & Record<string, unknown> }>(
        `select to_jsonb(u) - 'instance_id' || jsonb_build_object('identities', coalesce(
                  (select jsonb_agg(to_jsonb(i)) from ${namespace}.identities i where i.user_id = u.id), '[]')) as record
         from ${namespace}.users u where u.id > $1 order by u.id limit $2`,
        [last, batchSize],
      );
      if (rows.length === 0) return;
      yield rows.map((r) => ({ at: `user ${r.record.id}`, value: r.record }));
      last = rows[rows.length - 1].record.id;
    }
  } finally {
    await client.end();
  }
}
