// Runs bin/portcullis.js in a child process, as an operator runs it. A command that has not exited within
// a minute is killed, so its test fails with what it printed instead of hanging the file until the
// runner's limit.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const PORTCULLIS_BIN = fileURLToPath(new URL('../../bin/portcullis.js', import.meta.url));

export interface CliRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runPortcullis(args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): CliRun {
  const res = spawnSync(process.execPath, [PORTCULLIS_BIN, ...args], {
    cwd: options.cwd,
    env: options.env,
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  const stopped = res.error ? res.error.message : res.signal ? `killed by ${res.signal}` : '';
  return { status: res.status, stdout: res.stdout ?? '', stderr: stopped ? `${stopped}\n${res.stderr ?? ''}` : (res.stderr ?? '') };
}
