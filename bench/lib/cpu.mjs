// Where the CPU went during a phase, per request: the service's process (all its threads, argon2 on
// libuv's pool included), the database's processes, this bench process (autocannon during a load; the
// limit's own threads during a limit phase), and the rest of the machine (the argon2 limit's child
// process, other tenants, the kernel's softirq work). On 2 shared cores a ratio alone cannot say whether
// the service got slower or only got less of the machine; these figures can.
// Linux /proc only: elsewhere, or when /proc cannot be read, the accounting is null rather than wrong.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICK_US = clockTickMicros();

function clockTickMicros() {
  try {
    return 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return null;
  }
}

/** utime + stime of a whole process (every thread), in microseconds; 0 once it is gone. */
const processMicros = (pid) => statMicros(`/proc/${pid}/stat`);

/**
 * utime + stime of a process's main thread alone. In the service that is the supervisor: the HTTP guard's
 * relay (every request and answer crosses it), the crypto queue's admission and the argon2 calls it
 * starts; its HTTP and crypto threads, libuv's pool and V8's helpers are the rest of the process.
 */
const mainThreadMicros = (pid) => statMicros(`/proc/${pid}/task/${pid}/stat`);

function statMicros(path) {
  try {
    const stat = readFileSync(path, 'utf8');
    // Fields after the parenthesised command name, which may itself contain spaces: utime is the 14th
    // field of the line and stime the 15th, so the 12th and 13th after the name.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
  } catch {
    return 0;
  }
}

/**
 * Every PostgreSQL server process on the machine (the embedded one's, or the server behind
 * BENCH_DATABASE_URL), by pid: a backend that ends during a phase takes its time with it, so phases are
 * compared pid by pid (see delta below).
 */
function databaseMicros() {
  const byPid = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let comm;
    try {
      comm = readFileSync(`/proc/${entry}/comm`, 'utf8');
    } catch {
      continue;
    }
    if (comm.startsWith('postgres')) byPid.set(entry, processMicros(entry));
  }
  return byPid;
}

/** CPU the database's processes used between two snapshots: processes that started count whole, ended ones not at all. */
function databaseDelta(before, after) {
  let total = 0;
  for (const [pid, micros] of after) total += Math.max(0, micros - (before.get(pid) ?? 0));
  return total;
}

/** Busy and total CPU time of the whole machine, from the first line of /proc/stat. */
function machineMicros() {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = values.map((v) => Number(v) * CLOCK_TICK_US);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

function snapshot(servicePid) {
  const bench = process.cpuUsage();
  return {
    service: processMicros(servicePid),
    serviceMain: mainThreadMicros(servicePid),
    database: databaseMicros(),
    bench: bench.user + bench.system,
    machine: machineMicros(),
  };
}

/**
 * An accumulator over several phases of one kind (the slices of an interleaved measurement): wrap each
 * phase with `measure(fn)`, then `perOp(ops)` gives microseconds of CPU per operation for each part,
 * and how busy the whole machine was.
 */
export function cpuAccount(servicePid) {
  if (CLOCK_TICK_US === null || !servicePid) return { measure: (fn) => fn(), perOp: () => null };
  const sum = { service: 0, serviceMain: 0, database: 0, bench: 0, busy: 0, total: 0 };
  return {
    async measure(fn) {
      let before;
      try {
        before = snapshot(servicePid);
      } catch {
        return fn();
      }
      const value = await fn();
      const after = snapshot(servicePid);
      sum.service += after.service - before.service;
      sum.serviceMain += after.serviceMain - before.serviceMain;
      sum.bench += after.bench - before.bench;
      sum.database += databaseDelta(before.database, after.database);
      sum.busy += after.machine.busy - before.machine.busy;
      sum.total += after.machine.total - before.machine.total;
      return value;
    },
    perOp(ops) {
      if (!(ops > 0) || sum.total <= 0) return null;
      const us = (x) => Math.round(x / ops);
      const other = Math.max(0, sum.busy - sum.service - sum.database - sum.bench);
      return {
        serviceUs: us(sum.service),
        serviceMainThreadUs: us(sum.serviceMain),
        databaseUs: us(sum.database),
        benchUs: us(sum.bench),
        otherUs: us(other),
        machineBusy: Math.round((sum.busy / sum.total) * 100) / 100,
      };
    },
  };
}

/**
 * The ratio a load could reach against an argon2 limit if CPU alone decided: both sides run on the same
 * cores (interleaved, so other tenants take the same share of both), the limit spends `limitUsPerOp` of
 * CPU per call and the load spends service + database + bench (autocannon) per request. A ratio well
 * below this ceiling is time lost waiting; one near it is the cores' other work (bench/README.md).
 * `samples` are the limit's { perSec, cpuUsPerOp }, weighted by rate; `result` the load's merged row. None
 * when the load had refusals (503 over_capacity): they cost next to nothing, so CPU per request means little.
 */
export function cpuCeiling(samples, result) {
  const ops = samples.reduce((n, s) => n + s.perSec, 0);
  const load = result.cpu?.load;
  if (!load || !(ops > 0) || result.non2xx > 0) return null;
  const limitUsPerOp = Math.round(samples.reduce((sum, s) => sum + s.cpuUsPerOp * s.perSec, 0) / ops);
  const loadUsPerRequest = load.serviceUs + load.databaseUs + load.benchUs;
  return { limitUsPerOp, loadUsPerRequest, ratio: Math.round((limitUsPerOp / loadUsPerRequest) * 1000) / 1000 };
}
