// The whole bench run (bench/run.mjs checks dist/ first): starts the compiled service, seeds users, runs
// each scenario with autocannon and measures the limit it is compared with in the same run.
import os from 'node:os';
import { SCENARIOS } from './options.mjs';
import { startBenchService } from './service.mjs';
import { benchContext } from './context.mjs';
import { seedUsers } from './seed.mjs';
import { printTable, scenarioLine, writeResults } from './report.mjs';
import { SCENARIO_MODULES } from '../scenarios/index.mjs';
import { uvThreadpool } from '../scenarios/uv-threadpool.mjs';
import { cryptoChoices } from '../scenarios/crypto-choices.mjs';
import { parity } from '../scenarios/parity.mjs';
import { peer } from '../scenarios/peer.mjs';

/** Runs the chosen scenarios, prints the table, writes the JSON; resolves false when a scenario failed. */
export async function runAll(options) {
  const results = {
    startedAt: new Date().toISOString(),
    machine: { cpus: options.cpus, node: process.version, loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100) },
    settings: null,
    scenarios: {},
  };
  const main = options.scenarios.filter((s) => SCENARIOS.includes(s));
  if (main.length > 0) await runScenarios(options, main, results);
  if (options.scenarios.includes('uv-threadpool')) results.scenarios['uv-threadpool'] = await uvThreadpool(options);
  if (options.scenarios.includes('crypto-choices')) results.scenarios['crypto-choices'] = await cryptoChoices(options);
  if (options.scenarios.includes('parity')) results.scenarios.parity = await parity(options);
  if (options.scenarios.includes('peer')) results.scenarios.peer = await peer(options).catch((err) => ({ error: err.message }));
  printTable(results);
  console.log(`\nresults: ${writeResults(options.resultsDir, results)}`);
  return !Object.values(results.scenarios).some((r) => r.error);
}

/** The default scenarios, against one service started for them all. */
async function runScenarios(options, names, results) {
  const service = await startBenchService(options);
  try {
    results.settings = {
      httpWorkers: service.workers.http,
      cryptoWorkers: service.workers.crypto,
      dbPoolPerThread: service.poolSize,
      uvThreadpool: service.uvThreadpool,
      hash: service.hash,
      duration: options.duration,
      users: options.users,
      database: options.databaseUrl ? 'BENCH_DATABASE_URL' : 'embedded',
    };
    console.log(
      `portcullis bench: ${options.cpus} CPUs, node ${process.version}, load ${results.machine.loadavg.join(' ')}; ` +
        `${service.workers.http} HTTP threads, ${service.workers.crypto} crypto threads, ${service.poolSize} db connections per thread, ` +
        `UV_THREADPOOL_SIZE ${service.uvThreadpool}; argon2id m=${service.hash.memoryKiB} t=${service.hash.timeCost} p=${service.hash.parallelism}; ` +
        `${options.duration} s per phase, ${results.settings.database} database`,
    );
    await seedUsers(service, options.users);
    const bench = benchContext(options, service);
    for (const name of names) {
      try {
        results.scenarios[name] = await SCENARIO_MODULES[name].run(bench);
      } catch (err) {
        results.scenarios[name] = { error: err instanceof Error ? err.message : String(err) };
      }
      console.log(scenarioLine(name, results.scenarios[name]));
    }
  } finally {
    await service.stop();
  }
}
