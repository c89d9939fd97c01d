// The shared clock behind request deadlines (src/server/http/deadline-clock.ts) and withTimeout on it:
// a deadline fires once, never early and at most a resolution late; a cancelled one never fires; the
// clock keeps the thread alive only while a deadline is pending; the 504 and the Deadline's signal are
// what they were with a timer per request.
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeadlineClock } from '../src/server/http/deadline-clock.js';
import { Deadline, withTimeout } from '../src/server/http/answer.js';
import { ApiError } from '../src/server/errors.js';

t.test('fires once, not before its time and within a resolution after it', async (t) => {
  const clock = new DeadlineClock(20);
  const started = performance.now();
  const fired: number[] = [];
  clock.add(60, () => fired.push(performance.now() - started));
  await sleep(40);
  t.same(fired, [], 'not early');
  await sleep(80);
  t.equal(fired.length, 1, 'fired once');
  t.ok(fired[0] >= 60, `after 60 ms (${fired[0].toFixed(1)})`);
  t.ok(fired[0] < 60 + 20 + 40, `not much later than a resolution (${fired[0].toFixed(1)})`);
  t.equal(clock.size, 0);
});

t.test('a cancelled deadline never fires; the others in its bucket still do', async (t) => {
  const clock = new DeadlineClock(20);
  const fired: string[] = [];
  const a = clock.add(30, () => fired.push('a'));
  clock.add(30, () => fired.push('b'));
  clock.cancel(a);
  clock.cancel(a); // twice is harmless
  t.equal(clock.size, 1);
  await sleep(90);
  t.same(fired, ['b']);
  t.equal(clock.size, 0);
});

t.test('deadlines added out of order fire in their own time', async (t) => {
  const clock = new DeadlineClock(10);
  const fired: string[] = [];
  clock.add(120, () => fired.push('late'));
  clock.add(20, () => fired.push('early')); // earlier than the armed timer: re-arms it
  await sleep(70);
  t.same(fired, ['early']);
  await sleep(100);
  t.same(fired, ['early', 'late']);
});

t.test('one expiry that throws does not keep the others from firing', async (t) => {
  const clock = new DeadlineClock(10);
  const fired: string[] = [];
  clock.add(20, () => {
    throw new Error('boom');
  });
  clock.add(20, () => fired.push('second'));
  await sleep(60);
  t.same(fired, ['second']);
});

t.test('with a fake time source, bucketing is exact', async (t) => {
  let now = 1000;
  const clock = new DeadlineClock(100, () => now);
  const fired: string[] = [];
  clock.add(250, () => fired.push('x')); // due at 1250 → slot 13 (1300)
  now = 1299;
  // The real timer is armed for ~300 ms of the fake clock's difference; drive the tick by waiting for it.
  await sleep(320);
  t.same(fired, [], 'not before its slot by the time source');
  now = 1300;
  await sleep(20);
  t.same(fired, ['x']);
});

t.test('the timer does not keep the thread alive once nothing is pending', async (t) => {
  const clock = new DeadlineClock(10);
  const e = clock.add(10_000, () => t.fail('cancelled'));
  const timer = (clock as unknown as { timer: NodeJS.Timeout }).timer;
  t.equal(timer.hasRef(), true, 'held while a deadline is pending');
  clock.cancel(e);
  t.equal(timer.hasRef(), false, 'released when none is');
  const again = clock.add(10_000, () => undefined);
  t.equal(timer.hasRef(), true, 'held again');
  clock.cancel(again);
});

t.test('withTimeout: the work first gives its result and cancels the deadline', async (t) => {
  const clock = new DeadlineClock(10);
  t.equal(await withTimeout(Promise.resolve(42), 1000, undefined, clock), 42);
  await t.rejects(withTimeout(Promise.reject(new Error('own')), 1000, undefined, clock), { message: 'own' });
  t.equal(clock.size, 0);
});

t.test('withTimeout: the deadline first gives the 504 and aborts the Deadline signal', async (t) => {
  const clock = new DeadlineClock(10);
  const deadline = new Deadline();
  const signal = deadline.signal;
  const late = new Promise((resolve) => setTimeout(() => resolve('late'), 200));
  const err = await withTimeout(late, 30, deadline, clock).then(
    () => null,
    (e: unknown) => e,
  );
  t.ok(err instanceof ApiError);
  t.equal((err as ApiError).status, 504);
  t.equal(signal.aborted, true);
  t.equal(signal.reason, err, 'the signal carries the 504 itself');
  t.equal(clock.size, 0);
  await late; // its late result is ignored (the promise has settled)
});

t.test('a Deadline expires once; a signal asked for after that is born aborted with the first reason', async (t) => {
  const early = new Deadline();
  const signal = early.signal;
  early.expire(new Error('first'));
  early.expire(new Error('second'));
  t.equal(signal.aborted, true);
  t.equal((signal.reason as Error).message, 'first', 'the first reason stays');

  const late = new Deadline();
  late.expire(new Error('gone'));
  t.equal(late.signal.aborted, true, 'asked for after the expiry: already aborted');
  t.equal((late.signal.reason as Error).message, 'gone');
  t.equal(new Deadline().signal.aborted, false, 'a live deadline is not aborted');
});
