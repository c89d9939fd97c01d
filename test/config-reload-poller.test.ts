// The config directory's watch when file-system notifications cannot be had (docs/settings.md#reloading):
// with RELOADING_POLLERENABLED the directory is polled instead; without it the watch is tried again and,
// once it works, counts as a change. The watch is the real one; only its start is made to fail, as on a
// file system without notifications (the original's reloader has the same seam).
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EventEmitter, once } from 'node:events';
import { watchConfigDir, type WatchDir } from '../dist/server/reload/watch.js';
import { captureLog, LEVEL } from './helpers/log.js';

const SETTINGS = {
  notifyEnabled: true,
  pollerEnabled: true,
  pollerIntervalSeconds: 0.05,
  signalEnabled: false,
  signalNumber: 10,
  gracePeriodSeconds: 0.05,
};

/** fs.watch that fails `times` times first, with the error a file system without notifications gives. */
function failingWatch(times: number): WatchDir & { attempts: number } {
  const watch = ((dir: string, listener: () => void) => {
    watch.attempts++;
    if (watch.attempts <= times) throw Object.assign(new Error('ENOSYS: function not implemented, watch'), { code: 'ENOSYS' });
    return fs.watch(dir, listener);
  }) as WatchDir & { attempts: number };
  watch.attempts = 0;
  return watch;
}

// The watch's own timers do not hold the process open (the service's server does): this stands in for it.
const running = setInterval(() => {}, 1000);
t.teardown(() => clearInterval(running));

function scratchDir(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'reload-poller-'));
  fs.writeFileSync(path.join(dir, '10.env'), 'GOTRUE_SITE_URL=http://localhost:3000\n');
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('RELOADING_POLLERENABLED: an unwatchable directory is polled, and each change to its files is noticed', async (t) => {
  const dir = scratchDir(t);
  const { log, lines } = captureLog();
  const settled = new EventEmitter();
  const watch = watchConfigDir(dir, SETTINGS, log, () => settled.emit('reload'), failingWatch(Infinity));
  t.teardown(() => watch.close());
  t.match(
    lines.find((l) => l.level === LEVEL.error),
    { msg: 'cannot watch the config directory: polling it instead', dir },
  );

  const added = once(settled, 'reload');
  fs.writeFileSync(path.join(dir, '20.json'), '{"GOTRUE_JWT_EXP": 600}');
  await added;
  t.pass('a new .json file is noticed');

  const edited = once(settled, 'reload');
  fs.writeFileSync(path.join(dir, '10.env'), 'GOTRUE_SITE_URL=http://localhost:3001\nGOTRUE_JWT_EXP=900\n');
  await edited;
  t.pass('an edited .env file is noticed');

  const removed = once(settled, 'reload');
  fs.rmSync(path.join(dir, '20.json'));
  await removed;
  t.pass('a removed file is noticed');
});

t.test('without the poller: the watch is tried again, and once it works it counts as a change', async (t) => {
  const dir = scratchDir(t);
  const { log, lines } = captureLog();
  const settled = new EventEmitter();
  const failing = failingWatch(2);
  const reloaded = once(settled, 'reload');
  const watch = watchConfigDir(dir, { ...SETTINGS, pollerEnabled: false }, log, () => settled.emit('reload'), failing);
  t.teardown(() => watch.close());
  await reloaded;
  t.equal(failing.attempts, 3, 'two failed attempts, then a watch');
  t.same(
    lines.filter((l) => l.level === LEVEL.error).map((l) => l.msg),
    ['cannot watch the config directory; trying again'],
    'the failure is logged once, not at every attempt',
  );

  const edited = once(settled, 'reload');
  fs.writeFileSync(path.join(dir, '10.env'), 'GOTRUE_SITE_URL=http://localhost:3002\n');
  await edited;
  t.pass('the watch that came up notices changes');
});

// On Linux a watch of a removed or moved directory ends without an 'error' (and a new directory made at
// the path often gets the old one's inode back), so each way a directory can go is tried on the real watch.
for (const [how, replace] of [
  [
    'removed and made again',
    (dir: string) => {
      fs.rmSync(dir, { recursive: true });
      fs.mkdirSync(dir);
    },
  ],
  [
    'swapped for another directory',
    (dir: string) => {
      const next = fs.mkdtempSync(`${dir}-next-`);
      fs.renameSync(dir, `${dir}-old`);
      fs.renameSync(next, dir);
      fs.rmSync(`${dir}-old`, { recursive: true });
    },
  ],
] as const) {
  // A watch that never comes back is a wait without end: the subtest's own timeout makes it a failure.
  t.test(`a config directory ${how} is watched again: later changes to it are noticed`, { timeout: 20_000 }, async (t) => {
    const dir = scratchDir(t);
    const { log, lines } = captureLog();
    const settled = new EventEmitter();
    let attaches = 0;
    const counted: WatchDir = (path, listener) => {
      attaches++;
      return fs.watch(path, listener);
    };
    let rewatched = false;
    const watch = watchConfigDir(dir, { ...SETTINGS, pollerEnabled: false }, log, () => settled.emit('reload', rewatched), counted);
    t.teardown(() => watch.close());

    replace(dir);
    fs.writeFileSync(path.join(dir, '10.env'), 'GOTRUE_SITE_URL=http://localhost:3003\n');
    // Until the reload that the watch coming back counts as a change: none is pending after it.
    do await once(settled, 'reload');
    while (attaches < 2);
    t.match(
      lines.find((l) => l.level === LEVEL.warn),
      { msg: /^the config directory was (removed or moved|replaced); watching its path again$/, dir },
    );
    rewatched = true;
    // Then a change made only now, which only a watch of the new directory can see.
    fs.writeFileSync(path.join(dir, '20.env'), 'GOTRUE_JWT_EXP=600\n');
    const [afterRewatch] = await once(settled, 'reload');
    t.equal(afterRewatch, true, 'a change to the directory at the path is noticed');
  });
}
