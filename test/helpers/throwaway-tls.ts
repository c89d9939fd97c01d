// A throwaway certificate authority, a server certificate it signs for 127.0.0.1 and a client certificate, made with openssl in a
// temporary directory for one test file: the files a TLS collector serves and a client trusts it by.
import type { Test } from 'tap';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

export interface ThrowawayTls {
  /** paths of the PEM files */
  caFile: string;
  certFile: string;
  keyFile: string;
  /** a client's certificate and key the same CA signs */
  clientCertFile: string;
  clientKeyFile: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

export function throwawayTls(t: Test): ThrowawayTls {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'throwaway-tls-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const at = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=throwaway CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
  );
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(at('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'san.ext',
    '-out',
    'server.pem',
  );
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=client', '-keyout', 'client.key', '-out', 'client.csr');
  openssl('x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-out', 'client.pem');
  return {
    clientCertFile: at('client.pem'),
    clientKeyFile: at('client.key'),
    caFile: at('ca.pem'),
    certFile: at('server.pem'),
    keyFile: at('server.key'),
    ca: readFileSync(at('ca.pem')),
    cert: readFileSync(at('server.pem')),
    key: readFileSync(at('server.key')),
  };
}
