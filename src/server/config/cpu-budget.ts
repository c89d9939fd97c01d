// How many cores the default thread counts are sized for (docs/settings.md#threads). GOMAXPROCS when it is
// a positive whole number: the original's Go runtime sizes itself by it, so a deployment that bounds the
// original's CPU with it bounds this service's too. Else the CPUs this process may run on
// (os.availableParallelism, the affinity mask), bounded by the container's CPU limit (its cgroup's CFS
// quota), which Node 20's count ignores: limited to 2 CPUs on a 64-core host, the service would otherwise
// start 63 HTTP threads, each with a pool of database connections. The limit is rounded up, as Go does.
import { readFileSync } from 'node:fs';
import os from 'node:os';

export interface CpuBudget {
  cores: number;
  /** what set it: GOMAXPROCS, the container's CPU limit, or the CPUs the process may run on */
  from: 'GOMAXPROCS' | 'cgroup' | 'cpus';
}

export interface CgroupFiles {
  /** where the cgroup file systems are mounted */
  root: string;
  /** the process's own membership (`/proc/self/cgroup`) */
  membership: string;
}

const SYSTEM: CgroupFiles = { root: '/sys/fs/cgroup', membership: '/proc/self/cgroup' };

export function cpuBudget(gomaxprocs: string, files: CgroupFiles = SYSTEM): CpuBudget {
  if (/^\d+$/.test(gomaxprocs.trim()) && Number(gomaxprocs) > 0) return { cores: Number(gomaxprocs), from: 'GOMAXPROCS' };
  const cpus = os.availableParallelism();
  const limit = cgroupCpuLimit(files);
  return limit !== null && Math.ceil(limit) < cpus
    ? { cores: Math.max(1, Math.ceil(limit)), from: 'cgroup' }
    : { cores: cpus, from: 'cpus' };
}

/**
 * The lowest CPU limit (quota ÷ period) on the process's cgroup and its ancestors, in cgroup v2
 * (`cpu.max`) or v1 (`cpu.cfs_quota_us`); null when none is set or the files are not there. Inside a
 * container the cgroup mounted is the container's own, whatever path the membership names, so the mount's
 * top counts too.
 */
export function cgroupCpuLimit({ root, membership }: CgroupFiles): number | null {
  let lines: string[];
  try {
    lines = readFileSync(membership, 'utf8').split('\n');
  } catch {
    return null;
  }
  const limits: number[] = [];
  for (const line of lines) {
    const [, controllers, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (path === undefined) continue;
    if (controllers === '') {
      for (const dir of ancestors(path)) limits.push(...readLimit(`${root}${dir}/cpu.max`, v2Limit));
    } else if (controllers.split(',').includes('cpu')) {
      for (const dir of ancestors(path)) limits.push(...readLimit(`${root}/${controllers}${dir}`, v1Limit));
    }
  }
  return limits.length > 0 ? Math.min(...limits) : null;
}

/** `/a/b` → `/a/b`, `/a`, `` (the mount's top). */
function ancestors(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return parts.map((_, i) => `/${parts.slice(0, parts.length - i).join('/')}`).concat('');
}

function readLimit(at: string, read: (at: string) => number | null): number[] {
  try {
    const limit = read(at);
    return limit === null ? [] : [limit];
  } catch {
    return [];
  }
}

/** `cpu.max`: "max 100000" (none) or "200000 100000". */
function v2Limit(file: string): number | null {
  const [quota, period] = readFileSync(file, 'utf8').trim().split(/\s+/);
  return quota === 'max' || !(Number(quota) > 0 && Number(period) > 0) ? null : Number(quota) / Number(period);
}

/** `cpu.cfs_quota_us` (-1: none) over `cpu.cfs_period_us`, in the v1 controller's directory. */
function v1Limit(dir: string): number | null {
  const quota = Number(readFileSync(`${dir}/cpu.cfs_quota_us`, 'utf8').trim());
  const period = Number(readFileSync(`${dir}/cpu.cfs_period_us`, 'utf8').trim());
  return quota > 0 && period > 0 ? quota / period : null;
}
