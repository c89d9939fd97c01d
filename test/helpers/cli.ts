// Runs bin/portcullis.js in a child process, as an operator runs it. A command that has not exited within
// a minute is killed, so its test fails with what it printed instead of hanging the file until the
// runner's limit.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const PORTCULLIS_BIN = fileURLToPath(new URL('../../bin/portcullis.js', import.meta.url));

const LIMIT_MS = 60_000;

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  cwd?: string;
  env: NodeJS.ProcessEnv;
}

function result(status: number | null, stdout: string, stderr: string, stopped: string): CliRun {
  return { status, stdout, stderr: stopped ? `${stopped}\n${stderr}` : stderr };
}

/** For tests with no service of their own running: this thread waits, blocked, for the command. */
export function runPortcullis(args: string[], options: CliOptions): CliRun {
  const res = spawnSync(process.execPath, [PORTCULLIS_BIN, ...args], {
    cwd: options.cwd,
    env: options.env,
    encoding: 'utf8',
    timeout: LIMIT_MS,
    killSignal: 'SIGKILL',
  });
  const stopped = res.error ? res.error.message : res.signal ? `killed by ${res.signal}` : '';
  return result(res.status, res.stdout ?? '', res.stderr ?? '', stopped);
}

/**
 * For tests beside a service started in this process: its HTTP guard runs on this thread, and a blocked
 * thread would leave the test's kept-alive connections for the guard to time out under the next request.
 */
export function runPortcullisBesideService(args: string[], options: CliOptions): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PORTCULLIS_BIN, ...args], {
      cwd: options.cwd,
      env: options.env,
      timeout: LIMIT_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    let failed = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (err) => (failed = err.message));
    child.on('close', (status, signal) => resolve(result(status, stdout, stderr, failed || (signal ? `killed by ${signal}` : ''))));
  });
}
