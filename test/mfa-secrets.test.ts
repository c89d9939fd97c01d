// Secrets at rest (docs/mfa.md#secrets-at-rest): no TOTP secret or phone code in clear anywhere in the
// database or the log; the original's envelope format; key rotation with old keys still opening.
import t from 'tap';
import { createDecipheriv, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import { secretBox } from '../dist/server/mfa/encryption.js';
import { startTestService, type TestService } from './helpers/server.js';
import { createTestDatabase } from './helpers/db.js';
import { signUp } from './helpers/accounts.js';
import { challenge, enrollTotp, totpCode, verifiedTotp, verify } from './helpers/mfa.js';

const key = () => randomBytes(32).toString('base64url');
const boxWith = (
  current: { id: string; key: string } | null,
  old: Record<string, string> = {},
  jwtSecret = 'a-jwt-secret-of-some-length',
) =>
  secretBox({
    jwt: { secret: jwtSecret } as any,
    security: {
      dbEncryption: { encrypt: !!current, encryptionKeyId: current?.id ?? '', encryptionKey: current?.key ?? '', decryptionKeys: old },
    } as any,
  });

/** The envelope opened the way the format is specified, independently of the service's code. */
function openBySpec(envelope: string, rowId: string, keyB64url: string): string {
  const e = JSON.parse(envelope);
  const rowKey = Buffer.from(hkdfSync('sha256', Buffer.from(keyB64url, 'base64url'), Buffer.alloc(0), Buffer.from(rowId), 32));
  const data = Buffer.from(e.data, 'base64');
  const d = createDecipheriv('aes-256-gcm', rowKey, Buffer.from(e.nonce, 'base64'));
  d.setAuthTag(data.subarray(data.length - 16));
  return Buffer.concat([d.update(data.subarray(0, data.length - 16)), d.final()]).toString();
}

t.test("the envelope is the original's: key id, aes-gcm-hkdf, 12-byte nonce, bound to its row", async (t) => {
  const k1 = key();
  const box = boxWith({ id: 'k1', key: k1 });
  const row = randomUUID();
  const sealed = box.seal(row, 'JBSWY3DPEHPK3PXP');
  const e = JSON.parse(sealed);
  t.same(Object.keys(e).sort(), ['alg', 'data', 'key_id', 'nonce']);
  t.equal(e.key_id, 'k1');
  t.equal(e.alg, 'aes-gcm-hkdf');
  t.equal(Buffer.from(e.nonce, 'base64').length, 12);
  t.notOk(sealed.includes('JBSWY3DPEHPK3PXP'));
  t.equal(openBySpec(sealed, row, k1), 'JBSWY3DPEHPK3PXP', 'HKDF-SHA256(key, info=row id), AES-256-GCM with the tag appended');
  t.same(box.open(row, sealed), { value: 'JBSWY3DPEHPK3PXP', stale: false });
  t.throws(() => box.open(randomUUID(), sealed), 'another row cannot open it');
  t.not(box.seal(row, 'x'), box.seal(row, 'x'), 'a fresh nonce each time');
});

t.test('rotation: the new key seals, old keys still open (marked stale), unknown keys refuse', async (t) => {
  const k1 = key();
  const k2 = key();
  const row = randomUUID();
  const old = boxWith({ id: 'k1', key: k1 }).seal(row, 'secret-1');
  const rotated = boxWith({ id: 'k2', key: k2 }, { k1 });
  t.same(rotated.open(row, old), { value: 'secret-1', stale: true });
  t.equal(JSON.parse(rotated.seal(row, 'secret-1')).key_id, 'k2');
  t.throws(() => boxWith({ id: 'k2', key: k2 }).open(row, old), /no decryption key with id "k1"/);
  t.same(rotated.open(row, 'PLAINSECRET'), { value: 'PLAINSECRET', stale: true }, 'a value an older setup stored in clear');
  const fallback = boxWith(null);
  const sealed = fallback.seal(row, 'secret-2');
  t.equal(JSON.parse(sealed).key_id, 'portcullis-jwt-secret', 'without a key: sealed with one derived from JWT_SECRET');
  t.same(boxWith({ id: 'k2', key: k2 }).open(row, sealed), { value: 'secret-2', stale: true }, 'still opens once a key is configured');
});

t.test('after enrolment and verification no secret or code is in clear in any table or in the log', async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => api.stop());
  const s = await signUp(api);
  const { factor, session } = await verifiedTotp(api, s.access_token, 'app');
  const pending = await enrollTotp(api, session.access_token, 'pending');
  const secrets = [factor.totp.secret, pending.totp.secret];
  const tables = await api.db.query<{ table_name: string }>(
    'select table_name from information_schema.tables where table_schema = current_schema()',
  );
  t.ok(tables.rows.some((r) => r.table_name === 'mfa_factors'));
  let dump = '';
  for (const { table_name } of tables.rows) {
    const { rows } = await api.db.query(`select * from "${table_name}"`);
    dump += JSON.stringify(rows);
  }
  for (const secret of secrets) {
    t.notOk(dump.includes(secret), 'no base32 secret in the database');
    t.notOk(dump.includes(Buffer.from(secret).toString('base64')), 'nor its base64');
    t.notOk(dump.toLowerCase().includes(secret.toLowerCase()), 'nor in lower case');
  }
  const { rows } = await api.db.query('select secret from mfa_factors where id = $1', [factor.id]);
  t.equal(JSON.parse(rows[0].secret).alg, 'aes-gcm-hkdf');
  await api.stop();
  const log = api
    .logs()
    .map((l) => JSON.stringify(l))
    .join('\n');
  t.ok(log.length > 0, 'the log was read');
  for (const secret of secrets) t.notOk(log.includes(secret), 'no secret in the log');
});

t.test('rotating the key over a running database: old secrets verify and move to the new key', async (t) => {
  const database = await createTestDatabase();
  t.teardown(() => database.drop());
  const k1 = key();
  const k2 = key();
  const start = (env: Record<string, string>): Promise<TestService> =>
    startTestService({ DATABASE_URL: database.url, AUTH_MAILER_AUTOCONFIRM: 'true', ...env });
  const first = await start({ AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k1', AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: k1 });
  const s = await signUp(first);
  const factor = await enrollTotp(first, s.access_token);
  const sealed = (await first.db.query('select secret from mfa_factors where id = $1', [factor.id])).rows[0].secret;
  t.equal(JSON.parse(sealed).key_id, 'k1');
  await first.stop();

  const second = await start({
    AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY_ID: 'k2',
    AUTH_SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY: k2,
    AUTH_SECURITY_DB_ENCRYPTION_DECRYPTION_KEYS: `k1:${k1}`,
  });
  t.teardown(() => second.stop());
  const c = await challenge(second, s.access_token, factor.id);
  const v = await verify(second, s.access_token, factor.id, c.body.id, totpCode(factor.totp.secret));
  t.equal(v.status, 200, 'a secret sealed with the old key verifies');
  const resealed = (await second.db.query('select secret from mfa_factors where id = $1', [factor.id])).rows[0].secret;
  t.equal(JSON.parse(resealed).key_id, 'k2', 'and is sealed again with the current key');
});
