#!/usr/bin/env node
// The container's health check: GET /health on the port the service listens on, found by the service's
// own configuration loader (AUTH_API_PORT, then PORT, then GOTRUE_API_PORT, the same names in .env, then
// 8081). Exits 0 when healthy, 1 otherwise (a configuration the service would refuse is unhealthy too),
// within the check's timeout.
const { loadConfig } = await import(new URL('../dist/server/config/load.js', import.meta.url).href);

let port;
try {
  port = loadConfig().api.port;
} catch {
  process.exit(1);
}
fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2500) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
