// Noticing that a --config-dir changed, as the original's reloader does (docs/settings.md#reloading):
// file-system notifications, a poller only when notifications cannot be had and the poller is enabled,
// and a signal when enabled. Every change pushes the reload back until the grace period passes quietly,
// so an operator writing several files (or an editor writing one in steps) causes one reload.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';

export interface DirWatch {
  close(): void;
}

/** How the directory is watched: fs.watch, or a stand-in that fails as a file system without notifications does. */
export type WatchDir = (dir: string, listener: (event: string, filename: string | null) => void) => fs.FSWatcher;
const fsWatch: WatchDir = (dir, listener) => fs.watch(dir, listener);

export function watchConfigDir(
  dir: string,
  settings: Config['reloading'],
  log: Logger,
  onSettled: () => void,
  watchDir: WatchDir = fsWatch,
): DirWatch {
  const closers: Array<() => void> = [];
  let pending: NodeJS.Timeout | null = null;
  const changed = () => {
    if (pending) clearTimeout(pending);
    pending = setTimeout(() => {
      pending = null;
      onSettled();
    }, settings.gracePeriodSeconds * 1000);
  };
  closers.push(() => pending && clearTimeout(pending));

  if (settings.notifyEnabled) closers.push(watchNotify(dir, settings, log, changed, watchDir));
  if (settings.signalEnabled) closers.push(watchSignal(settings.signalNumber, log, changed));
  return { close: () => closers.forEach((close) => close()) };
}

/**
 * fs.watch on the directory. Any entry counts, not only .env and .json files: Kubernetes updates a
 * mounted ConfigMap by swapping a `..data` symlink, which names no such file; a change that leaves the
 * configuration as it was is noticed later and costs nothing. A directory that is missing, or goes, is
 * looked for again every grace period (at least each second) and counts as a change when it (re)appears.
 * On Linux the watch of a removed or moved directory ends without an 'error': it reports the directory's
 * own name once more and goes quiet. So that report, or another directory at the path (device and inode
 * differ) at one of those looks, drops the watch, and the path is watched again.
 */
function watchNotify(dir: string, settings: Config['reloading'], log: Logger, changed: () => void, watchDir: WatchDir): () => void {
  let watcher: fs.FSWatcher | null = null;
  let watched: string | null = null; // the watched directory's identity
  let poller: (() => void) | null = null;
  let failing = false;
  /** Closes the watch; the retry below attaches a new one, which counts as a change. */
  const drop = (level: 'warn' | 'error', why: string, err?: unknown) => {
    log[level]({ err, dir }, why);
    watcher?.close();
    watcher = null;
    failing = true;
  };
  const attach = () => {
    try {
      watched = identityOf(dir);
      const own: fs.FSWatcher = watchDir(dir, (_event, filename) => {
        changed();
        if (filename === path.basename(dir) && watcher === own)
          drop('warn', 'the config directory was removed or moved; watching its path again');
      });
      watcher = own;
    } catch (err) {
      if (settings.pollerEnabled && identityOf(dir) !== null) {
        // The directory is there but cannot be watched (a file system without notifications).
        log.error({ err, dir }, 'cannot watch the config directory: polling it instead');
        poller = startPoller(dir, settings.pollerIntervalSeconds, log, changed);
        return;
      }
      if (!failing) log.error({ err, dir }, 'cannot watch the config directory; trying again');
      failing = true;
      return;
    }
    watcher.on('error', (err) => drop('error', 'the config directory watch failed; trying again', err));
    if (failing) changed();
    failing = false;
  };
  attach();
  const retry = setInterval(
    () => {
      if (watcher && identityOf(dir) !== watched) drop('warn', 'the config directory was replaced; watching its path again');
      if (!watcher && !poller) attach();
    },
    Math.max(1000, settings.gracePeriodSeconds * 1000),
  );
  retry.unref();
  return () => {
    clearInterval(retry);
    watcher?.close();
    poller?.();
  };
}

/** Compares the .env and .json files' names, sizes, modes and times every interval. */
function startPoller(dir: string, intervalSeconds: number, log: Logger, changed: () => void): () => void {
  const scan = () => {
    try {
      return fs
        .readdirSync(dir)
        .filter((name) => ['.env', '.json'].includes(path.extname(name)))
        .sort()
        .map((name) => {
          const stat = fs.statSync(path.join(dir, name));
          return stat.isDirectory() ? '' : `${name}:${stat.size}:${stat.mode}:${stat.mtimeMs}`;
        })
        .join('\n');
    } catch (err) {
      log.error({ err, dir }, 'cannot poll the config directory');
      return null;
    }
  };
  let last = scan();
  const timer = setInterval(() => {
    const now = scan();
    if (now !== null && last !== null && now !== last) changed();
    if (now !== null) last = now;
  }, intervalSeconds * 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/** The signal by its number (the original's RELOADING_SIGNAL_NUMBER, 10 = SIGUSR1 on Linux). */
function watchSignal(number: number, log: Logger, changed: () => void): () => void {
  const name = (Object.keys(os.constants.signals) as NodeJS.Signals[]).find((s) => os.constants.signals[s] === number);
  // The stop signals keep their meaning; a reload must never be what ends the service.
  if (!name || ['SIGTERM', 'SIGINT', 'SIGKILL', 'SIGSTOP'].includes(name)) {
    log.error({ signal: number }, 'RELOADING_SIGNAL_NUMBER is not a signal that can reload the configuration');
    return () => {};
  }
  const listener = () => changed();
  process.on(name, listener);
  return () => process.off(name, listener);
}

/** The directory's device and inode, or null when it is not there (or not a directory). */
function identityOf(dir: string): string | null {
  try {
    const stat = fs.statSync(dir);
    return stat.isDirectory() ? `${stat.dev}:${stat.ino}` : null;
  } catch {
    return null;
  }
}
