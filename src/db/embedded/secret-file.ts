// Secrets generated once and kept in the data directory (development setup: no DATABASE_URL).
import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';

/**
 * Returns the secret stored at `path`, creating it (`bytes` random bytes, base64url, mode 0600) when absent.
 * Creation is atomic: the secret is written to a private temporary file and hard-linked into place, so two
 * processes starting together agree on one secret and nobody ever reads a half-written file.
 */
export function loadOrCreateSecret(path: string, bytes: number): string {
  const existing = readSecret(path);
  if (existing !== undefined) return existing;
  const secret = randomBytes(bytes).toString('base64url');
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temporary, `${secret}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, path);
    return secret;
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err;
    return readSecret(path) as string; // another process won the race; its file is complete
  } finally {
    unlinkSync(temporary);
  }
}

function readSecret(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return undefined;
    throw err;
  }
  const secret = text.trim();
  // An emptied file is damage, not absence: regenerating a database password would lock us out.
  if (secret === '') throw new Error(`${path} is empty; restore it or remove it to generate a new secret`);
  return secret;
}

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}
