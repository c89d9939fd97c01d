// A real PgBouncer (Debian's package) for tests: started on a free port in transaction mode in front of
// the PostgreSQL named by TEST_DATABASE_URL, trusting the same user, and stopped by close(). PgBouncer
// refuses to run as root, so as root it drops to `nobody` (-u), in a directory that user may write.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { freePort } from './server.js';

export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'].find((p) => existsSync(p));

export interface PgBouncer {
  port: number;
  /** `databaseUrl` with its host and port replaced by PgBouncer's */
  through(databaseUrl: string): string;
  log(): string;
  close(): Promise<void>;
}

export async function startPgBouncer(): Promise<PgBouncer> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed');
  const server = new URL(process.env.TEST_DATABASE_URL!);
  const user = decodeURIComponent(server.username || 'postgres');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgbouncer-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const ini = path.join(dir, 'pgbouncer.ini');
  writeFileSync(path.join(dir, 'users.txt'), `"${user}" "${decodeURIComponent(server.password)}"\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 4000',
      'default_pool_size = 20',
      // node-postgres sends the pool's session settings as the `options` startup parameter, which PgBouncer
      // cannot keep in transaction mode: the role's or database's settings stand in (README: PgBouncer).
      'ignore_startup_parameters = options,extra_float_digits',
      `logfile = ${path.join(dir, 'pgbouncer.log')}`,
      `pidfile = ${path.join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  for (const f of ['users.txt', 'pgbouncer.ini']) chmodSync(path.join(dir, f), 0o644);
  const args = process.getuid?.() === 0 ? ['-u', 'nobody', ini] : [ini];
  const child: ChildProcess = spawn(PGBOUNCER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await waitForPort(port, child, () => output);
  const log = () => {
    const file = path.join(dir, 'pgbouncer.log');
    return output + (existsSync(file) ? readFileSync(file, 'utf8') : '');
  };
  return {
    port,
    through(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    log,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => socket.end(() => resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`pgbouncer did not listen on ${port}: ${output()}`);
}
