// The table printed at the end and the JSON file in bench/results/.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const fmt = (x) =>
  typeof x !== 'number'
    ? String(x ?? '')
    : x >= 100
      ? Math.round(x).toLocaleString('en-US')
      : x >= 10
        ? x.toFixed(1)
        : String(Math.round(x * 100) / 100);

export function scenarioLine(name, r) {
  if (r.skipped) return `  ${name.padEnd(15)} skipped: ${r.skipped}`;
  if (r.error) return `  ${name.padEnd(15)} FAILED: ${r.error}`;
  const verdict = r.meetsTarget === null || r.meetsTarget === undefined ? '' : r.meetsTarget ? ' ok' : ' MISSED';
  const target =
    r.target === null || r.target === undefined ? 'no target' : `target ${r.targetKind === 'max' ? '≤' : '≥'} ${r.target}${verdict}`;
  const shed = r.refused
    ? `; accepted p99 ${fmt(r.accepted.p99)} ms (≤ ${r.accepted.target}), ${fmt(r.refused.perSec)} refused/s p99 ${fmt(r.refused.p99)} ms (< ${r.refused.target})`
    : '';
  const extra =
    shed + (r.health ? `; /health p99 ${r.health.p99} ms (< ${r.health.target}${r.health.meetsTarget ? ' ok' : ' MISSED'})` : '');
  const bad = r.non2xx ? `; ${r.non2xx} non-2xx ${JSON.stringify(r.statuses ?? '')}` : '';
  return (
    `  ${name.padEnd(15)} ${fmt(r.reqPerSec).padStart(7)} req/s  p50 ${fmt(r.p50)} ms  p99 ${fmt(r.p99)} ms  ` +
    `limit ${fmt(r.limit)} (${r.limitKind})  ratio ${r.ratio} (${target})${extra}${bad}${handlerLine(r.handler)}` +
    `${databaseLine(r.databaseCpu)}${cpuLine(r.cpu)}${ceilingLine(r.cpuCeiling)}`
  );
}

/**
 * CPU µs per request of the load and per operation of the limit, by process (lib/cpu.mjs); the service's
 * main thread (the supervisor: the HTTP guard's relay, the crypto admission) also on its own.
 */
function cpuLine(cpu) {
  if (!cpu?.load) return '';
  const main = (c) => (c.serviceMainThreadUs > 0 ? ` (main thread ${c.serviceMainThreadUs})` : '');
  const parts = (c) =>
    `service ${c.serviceUs}${main(c)}, database ${c.databaseUs}, bench ${c.benchUs}, other ${c.otherUs} (machine ${Math.round(c.machineBusy * 100)}% busy)`;
  const limit = cpu.limit ? `; limit, per op: ${parts(cpu.limit)}` : '';
  const handler = cpu.handler ? `\n  ${''.padEnd(15)} µs of CPU: minimal handler, per request: ${parts(cpu.handler)}` : '';
  return `\n  ${''.padEnd(15)} µs of CPU: load, per request: ${parts(cpu.load)}${limit}${handler}`;
}

/** token-password and signup: the ratio CPU alone would allow on these shared cores (lib/cpu.mjs cpuCeiling). */
function ceilingLine(c) {
  if (!c) return '';
  return (
    `\n  ${''.padEnd(15)} CPU-bound ceiling ${c.ratio}: argon2 direct ${c.limitUsPerOp} µs per call ÷ ` +
    `${c.loadUsPerRequest} µs per request (service + database + bench)`
  );
}

/** The second limit of user and token-refresh: a minimal uWS handler doing the same work (limits/handler.mjs). */
function handlerLine(h) {
  if (!h) return '';
  const bad = h.non2xx ? `; ${h.non2xx} non-2xx ${JSON.stringify(h.statuses)}` : '';
  const target = h.target === null ? '' : ` (target ≥ ${h.target}${verdict(h.meetsTarget)})`;
  const cpuTarget = h.cpuTarget == null ? '' : ` (target ≤ ${h.cpuTarget}${verdict(h.meetsCpuTarget)})`;
  return (
    `\n  ${''.padEnd(15)} minimal handler ${fmt(h.perSec)} req/s: ratio ${h.ratio}${target}; ` +
    `service CPU per request ${h.cpuRatio ?? '?'}× the handler's${cpuTarget}${bad}`
  );
}

/** token-refresh: PostgreSQL's CPU per grant against its CPU per run of the grant's statements alone. */
function databaseLine(d) {
  if (!d) return '';
  return `\n  ${''.padEnd(15)} database CPU per request ${d.ratio ?? '?'}× the SQL limit's per operation (target ≤ ${d.target}${verdict(d.meetsTarget)})`;
}

const verdict = (meets) => (meets === null || meets === undefined ? ' ?' : meets ? ' ok' : ' MISSED');

export function printTable(results) {
  if (!Object.values(results.scenarios).some((r) => !r.runs && !r.measured)) return;
  console.log('\n| scenario | req/s | p50 ms | p99 ms | limit | ratio | target |');
  console.log('|---|---:|---:|---:|---|---:|---|');
  for (const [name, r] of Object.entries(results.scenarios)) {
    if (r.runs || r.measured) continue; // uv-threadpool, crypto-choices and parity print their own lines
    if (r.skipped || r.error) {
      console.log(`| ${name} | — | — | — | ${r.skipped ? 'skipped' : 'failed'}: ${r.skipped ?? r.error} | — | — |`);
      continue;
    }
    const target = r.target === null ? '—' : `${r.targetKind === 'max' ? '≤' : '≥'} ${r.target} ${r.meetsTarget ? 'ok' : 'missed'}`;
    console.log(
      `| ${name} | ${fmt(r.reqPerSec)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.limit)} ${r.limitKind} | ${r.ratio} | ${target} |`,
    );
    // The second limit and the CPU targets, each a row of its own under the scenario's.
    const sub = (label, limit, ratio, sign, target, meets) =>
      console.log(
        `| ${name} (${label}) | | | | ${limit} | ${ratio ?? '?'} | ${target == null ? '—' : `${sign} ${target} ${meets ? 'ok' : 'missed'}`} |`,
      );
    const h = r.handler;
    if (h) {
      sub('handler', `${fmt(h.perSec)} minimal uWS handler req/s, same work and threads`, h.ratio, '≥', h.target, h.meetsTarget);
      if (h.cpuTarget != null)
        sub('CPU', "service CPU per request × the minimal handler's", h.cpuRatio, '≤', h.cpuTarget, h.meetsCpuTarget);
    }
    const d = r.databaseCpu;
    if (d) sub('database CPU', "database CPU per request × the SQL limit's", d.ratio, '≤', d.target, d.meetsTarget);
  }
}

export function writeResults(dir, results) {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${results.startedAt.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
  return file;
}
