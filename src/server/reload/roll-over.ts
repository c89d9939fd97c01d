// The HTTP threads that serve, one set per configuration. A reload starts a new set with the new
// configuration beside the running one; once they all listen, new connections go to them only, and the
// old set finishes what it has, then ends. Reloads run one after another; one whose threads fail to start
// leaves the running ones in place (docs/settings.md#reloading). service.ts owns the rest of the supervisor.
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Config, ConfigSources } from '../config/load.js';
import type { HttpThreads } from '../http-threads.js';
import { nextConfig } from './next-config.js';

/** How long the threads of a configuration that was reloaded may take to finish their requests. */
const ROLL_OVER_DRAIN_MS = 10_000;
/** How long the old threads keep serving, out of the guard's rotation, before they drain. */
const ROLL_OVER_SETTLE_MS = 1000;

export interface RollOverOptions {
  /** the set already listening, and the configuration it runs */
  serving: HttpThreads;
  config: Config;
  /** how many threads each set runs */
  count: number;
  /** a new set for a configuration, its slots among the guard's upstreams starting at `slotBase` */
  threadsFor: (config: Config, slotBase: number) => HttpThreads;
  /** where the configuration is read again at each reload */
  sources: ConfigSources | undefined;
  /** called once a new set serves, before the old one drains: what else reads the configuration follows it */
  onRolledOver: (config: Config) => Promise<void>;
  log: Logger;
}

export interface ServingThreads {
  /** the set that takes new connections */
  readonly threads: HttpThreads;
  readonly config: Config;
  /** how many reloaded configurations the threads have been rolled over to */
  readonly reloads: number;
  /** how many crashed threads have been replaced, in every set so far */
  readonly restarts: number;
  /** Reads the configuration again and rolls over if it changed; queued behind a reload under way. */
  reload(): Promise<void>;
  /** No reload starts from now on; resolves once the one under way, if any, has finished. */
  stopReloading(): Promise<void>;
}

export function servingThreads(options: RollOverOptions): ServingThreads {
  const { count, threadsFor, sources, onRolledOver, log } = options;
  let threads = options.serving;
  let config = options.config;
  let generation = 0;
  let reloads = 0;
  let restartsBefore = 0;
  let stopping = false;
  let reloading: Promise<void> = Promise.resolve();

  const rollOver = async (next: Config) => {
    const fresh = threadsFor(next, ++generation * count);
    try {
      await Promise.all(Array.from({ length: count }, (_, i) => fresh.spawn(i)));
    } catch (err) {
      log.error({ err }, 'the HTTP threads for the reloaded configuration did not start: the running ones keep serving');
      fresh.detach();
      await fresh.drain(1000);
      return;
    }
    const old = threads;
    threads = fresh;
    config = next;
    old.detach();
    restartsBefore += old.restarts;
    reloads++;
    await onRolledOver(next);
    log.info({ threads: count }, 'HTTP threads serve the reloaded configuration; the previous ones are draining');
    // A connection the guard handed an old thread just before detach() may not have had its request read
    // yet; a drain now would find nothing in flight and close it unanswered. The guard sends no new ones
    // there any more, so a short wait lets those few requests start, and the drain then waits for them.
    await delay(ROLL_OVER_SETTLE_MS);
    await old.drain(ROLL_OVER_DRAIN_MS);
    log.info({ threads: count }, 'the previous HTTP threads have drained and ended');
  };

  return {
    get threads() {
      return threads;
    },
    get config() {
      return config;
    },
    get reloads() {
      return reloads;
    },
    get restarts() {
      return restartsBefore + threads.restarts;
    },
    reload() {
      reloading = reloading
        .then(async () => {
          if (stopping || !sources) return;
          const next = nextConfig(config, sources, log);
          if (next) await rollOver(next);
        })
        .catch((err) => log.error({ err }, 'configuration reload failed; the running configuration is kept'));
      return reloading;
    },
    stopReloading() {
      stopping = true;
      return reloading;
    },
  };
}
