// Requests with nothing to send wait out the median duration of recent sends of the same kind, measured from
// their own start (src/server/delivery/send-timing.ts), on a clock the test controls: no real time passes.
import t from 'tap';
import { createSendTiming } from '../dist/server/delivery/send-timing.js';

function fakeClock() {
  const slept: number[] = [];
  const clock = {
    at: 0,
    now: () => clock.at,
    sleep: (ms: number) => {
      slept.push(ms);
      return Promise.resolve();
    },
  };
  return { clock, slept };
}

t.test('nothing recorded yet: no wait', async (t) => {
  const { clock, slept } = fakeClock();
  await createSendTiming(clock).nothingSent({ kind: 'recover', startedAt: 0 });
  t.strictSame(slept, []);
});

t.test('the wait tops the request up to the median of recent sends of its kind', async (t) => {
  const { clock, slept } = fakeClock();
  const timing = createSendTiming(clock);
  for (const duration of [40, 900, 50, 60, 45]) {
    // one slow outlier does not move the median
    clock.at = 1000 + duration;
    timing.sent({ kind: 'recover', startedAt: 1000 });
  }
  clock.at = 5010; // this request has already taken 10 ms
  await timing.nothingSent({ kind: 'recover', startedAt: 5000 });
  t.strictSame(slept, [40], 'median 50 ms, less the 10 ms already spent');
  await timing.nothingSent({ kind: 'signup', startedAt: 5000 });
  t.strictSame(slept, [40], 'another kind has its own sends');
  clock.at = 5100;
  await timing.nothingSent({ kind: 'recover', startedAt: 5000 });
  t.strictSame(slept, [40], 'a request already slower than the median waits no longer');
});

t.test('only the most recent sends count', async (t) => {
  const { clock, slept } = fakeClock();
  const timing = createSendTiming(clock);
  for (let i = 0; i < 100; i++) {
    clock.at = i < 50 ? 10 : 200;
    timing.sent({ kind: 'resend:signup', startedAt: 0 });
  }
  clock.at = 0;
  await timing.nothingSent({ kind: 'resend:signup', startedAt: 0 });
  t.strictSame(slept, [200], 'a relay that slowed down is followed');
});
