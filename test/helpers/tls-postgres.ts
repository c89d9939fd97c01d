// An embedded PostgreSQL server of a test's own that speaks TLS with a self-signed certificate for
// `localhost`: for tests of how connections judge a server's certificate.
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { startEmbeddedPostgres } from '../../dist/db/embedded/server.js';
import { makeKeyPair } from './saml-idp.js';

/** As root the server runs as the `postgres` OS user, which must own its key file. */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number.parseInt(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }), 10);
  return { uid: id('-u'), gid: id('-g') };
}

/** A data directory (under the OS temp dir, reachable by the server's user) holding a self-signed certificate. */
export function dataDirWithCertificate(t: Test): { dataDir: string; certFile: string; keyFile: string } {
  const dataDir = mkdtempSync(join(tmpdir(), 'portcullis-dburl-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { privateKeyPem, certificatePem } = makeKeyPair('localhost');
  const certFile = join(dataDir, 'server.crt');
  const keyFile = join(dataDir, 'server.key');
  writeFileSync(certFile, certificatePem, { mode: 0o644 });
  writeFileSync(keyFile, privateKeyPem, { mode: 0o600 });
  const owner = serverUser();
  if (owner) chownSync(keyFile, owner.uid, owner.gid);
  return { dataDir, certFile, keyFile };
}

/** A server with TLS on, stopped with the test; `certFile` is its certificate, a trust anchor of its own. */
export async function startTlsPostgres(t: Test): Promise<{ url: string; dataDir: string; certFile: string }> {
  const { dataDir, certFile, keyFile } = dataDirWithCertificate(t);
  const db = await startEmbeddedPostgres({
    dataDir,
    log: () => {},
    settings: { ssl: 'on', ssl_cert_file: certFile, ssl_key_file: keyFile },
  });
  t.teardown(() => db.stop());
  return { url: db.url, dataDir, certFile };
}
