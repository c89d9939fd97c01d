// The service under test, in its own process as bin/portcullis.js runs it, so that its supervisor thread
// (which relays crypto-pool calls) does not share an event loop with the load generator, and so that
// UV_THREADPOOL_SIZE can be chosen before the process starts. Reports back over IPC.
import { loadConfig } from '../../dist/server/config/load.js';
import { createLogger } from '../../dist/server/observability/log.js';
import { startService } from '../../dist/server/service.js';
import { loadOrCreateJwtSecret } from '../../dist/db/embedded/server.js';

const config = loadConfig({ envFile: null });
const log = createLogger(config.log);
const service = await startService(config, log);
process.send({
  type: 'ready',
  url: service.url,
  port: service.port,
  databaseUrl: service.databaseUrl,
  namespace: config.db.namespace,
  workers: config.workers,
  maxPoolSize: config.db.maxPoolSize,
  hash: config.password.hash,
  aud: config.jwt.aud,
  role: config.jwt.defaultGroupName,
  // for the minimal-handler limit (bench/limits/handler-thread.mjs), which verifies and signs as the service does
  jwtSecret: config.jwt.secret || (config.development ? loadOrCreateJwtSecret(config.dataDir) : ''),
});
process.on('message', (message) => {
  if (message?.type !== 'stop') return;
  service
    .stop()
    .then(
      () => process.send({ type: 'stopped' }),
      (err) => process.send({ type: 'stopped', error: String(err) }),
    )
    .finally(() => process.disconnect());
});
