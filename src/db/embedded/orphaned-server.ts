// After `kill -9` of the service, its embedded PostgreSQL keeps running (orphaned) and holds the data
// directory, so the next start would fail with `lock file "postmaster.pid" already exists`. The service
// records itself as the server's owner in <dataDir>/pg-owner when it starts the server; a later start
// stops a server that serves this very data directory and whose owner is gone, then carries on. It never
// signals a process that is not a postgres on this data directory, nor one whose owner is alive.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readPostmasterPid, servesDataDir } from './postmaster-pid.js';

const STOP_WAIT_MS = 30_000;
const POLL_MS = 100;

interface Owner {
  pid: number;
  started: string | null;
}

/** Writes this process as the owner of the server about to start in `dataDir`. */
export function recordOwner(dataDir: string): void {
  writeFileSync(join(dataDir, 'pg-owner'), `${process.pid} ${startTimeOf(process.pid) ?? ''}\n`, { mode: 0o600 });
}

/** Stops an orphaned server of `pgDir` (fast shutdown, bounded wait). Returns whether there was one. */
export async function stopOrphanedServer(dataDir: string, pgDir: string, log: (msg: string) => void): Promise<boolean> {
  const pid = readPostmasterPid(pgDir);
  if (pid === null || !servesDataDir(pid, pgDir)) return false;
  const owner = readOwner(dataDir);
  if (owner === null || isAlive(owner)) return false; // someone's running server: the start will say so
  log(`stopping PostgreSQL ${pid} left running on ${pgDir} by process ${owner.pid}, which is gone`);
  // SIGINT is postgres' fast shutdown: it ends open sessions, writes a checkpoint and removes its pid file.
  process.kill(pid, 'SIGINT');
  for (const deadline = Date.now() + STOP_WAIT_MS; servesDataDir(pid, pgDir);) {
    if (Date.now() > deadline) throw new Error(`PostgreSQL ${pid} on ${pgDir} did not stop within ${STOP_WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}

function readOwner(dataDir: string): Owner | null {
  try {
    const [pid, started] = readFileSync(join(dataDir, 'pg-owner'), 'utf8').trim().split(' ');
    const n = Number.parseInt(pid, 10);
    return Number.isInteger(n) && n > 0 ? { pid: n, started: started || null } : null;
  } catch {
    return null; // no owner recorded (an older version, or started by hand): not ours to stop
  }
}

/** Alive, and the same process that wrote the file (its start time tells a reused PID apart). */
function isAlive(owner: Owner): boolean {
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const started = startTimeOf(owner.pid);
  return owner.started === null || started === null || started === owner.started;
}

/** The process' start time in clock ticks since boot (/proc/<pid>/stat field 22), or null without /proc. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself contain spaces.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}
