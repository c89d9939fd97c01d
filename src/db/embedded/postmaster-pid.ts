// A crash (or SIGKILL of the whole container) leaves <pgdata>/postmaster.pid behind. Postgres ignores such
// a file when its PID is dead, but refuses to start when the PID now belongs to another live process —
// common after a container restart, where PIDs are handed out again from 1. This decides whether the file
// is stale and removes it, so the caller can retry the start once.
import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/** The postmaster's PID recorded in `pgDir`, or null when there is no (readable) pid file. */
export function readPostmasterPid(pgDir: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** Removes postmaster.pid when no postgres serving `pgDir` has that PID. Returns whether it did. */
export function removeStalePidFile(pgDir: string, log: (msg: string) => void): boolean {
  const file = join(pgDir, 'postmaster.pid');
  if (!existsSync(file)) return false; // no pid file: the start failed for another reason
  const pid = readPostmasterPid(pgDir);
  if (pid !== null && servesDataDir(pid, pgDir)) return false;
  unlinkSync(file);
  log(`removed stale ${file} (process ${pid} is not a postgres server for this data directory)`);
  return true;
}

/** Whether process `pid` is alive and is a postgres started on `pgDir`. */
export function servesDataDir(pid: number, pgDir: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false; // EPERM: alive, someone else's
  }
  try {
    // Our postmaster was started as `postgres -D <pgDir> ...` (a zombie's cmdline is empty).
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv.includes(pgDir);
  } catch {
    return true; // no /proc (macOS): the process is alive, so leave its file alone
  }
}
