// GET /settings against a bare uWS handler answering the same bytes on the same number of threads. Both
// are loaded by one autocannon thread, which itself saturates near ~44k req/s on this kind of machine:
// when both numbers sit there, the ratio says "as fast as the client can tell", not more.
import { openBareUws } from '../limits/uws.mjs';

export default {
  name: 'settings',
  describe: 'GET /settings (a constant answer)',
  async run(bench) {
    const connections = 32;
    const body = await (await fetch(`${bench.service.url}/settings`)).text();
    const bare = await openBareUws(bench.service, { path: '/settings', body, connections });
    const { result, limit, rates } = await bench
      .bracket(bare.measure, (o) => bench.load({ duration: o.duration, title: 'settings', path: '/settings', connections }))
      .finally(bare.close);
    return bench.compare(
      { ...result, connections },
      { limit, limitDetail: { samples: rates }, limitKind: 'bare uWS handler req/s, same threads', target: 0.9 },
    );
  },
};
