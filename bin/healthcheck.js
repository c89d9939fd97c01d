#!/usr/bin/env node
// The container's health check: GET /health on the port the service listens on, found by the service's
// own configuration loader (AUTH_API_PORT, then GOTRUE_API_PORT, then PORT, the same names in .env or the
// files given with -c/-d, then 8081). Exits 0 when healthy, 1 otherwise (a configuration the service
// would refuse is unhealthy too), within the check's timeout.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';

const dist = (file) => import(new URL(`../dist/server/${file}`, import.meta.url).href);
const { loadConfig } = await dist('config/load.js');
const { parseCommandLine } = await dist('cli-flags.js');

/**
 * The -c/-d flags the service was started with: the health check runs as a separate process that
 * Docker starts without the container's command line, so it reads it from the service's process: the
 * first one running bin/portcullis.js in the same working directory (the image's WORKDIR for both; on a
 * machine shared with other services, only the one started beside this check).
 */
function serviceFlags() {
  let pids;
  try {
    pids = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => a - b);
  } catch {
    return {};
  }
  for (const pid of pids) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const at = argv.findIndex((arg) => arg.endsWith('bin/portcullis.js'));
      if (at === -1 || pid === String(process.pid)) continue;
      const line = parseCommandLine(argv.slice(at + 1));
      if (line instanceof Error) return {};
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (cwd !== process.cwd()) continue;
      const resolve = (p) => (p ? path.resolve(cwd, p) : null);
      return { configFile: resolve(line.configFile), configDir: resolve(line.configDir) };
    } catch {
      /* a process that ended or is not ours to read */
    }
  }
  return {};
}

let port;
try {
  port = loadConfig(serviceFlags()).api.port;
} catch {
  process.exit(1);
}
fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2500) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
