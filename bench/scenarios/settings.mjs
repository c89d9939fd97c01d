// GET /settings against a bare uWS handler answering the same bytes on the same number of threads. Both
// are loaded by one autocannon thread, which itself saturates near ~44k req/s on this kind of machine:
// when both numbers sit there, the ratio says "as fast as the client can tell", not more.
import { bareUwsLimit } from '../limits/uws.mjs';

export default {
  name: 'settings',
  describe: 'GET /settings (a constant answer)',
  async run(bench) {
    const connections = 32;
    const body = await (await fetch(`${bench.service.url}/settings`)).text();
    const { result, limit, rates } = await bench.bracket(
      (o) => bareUwsLimit(bench.service, o, { path: '/settings', body, connections }),
      (o) => bench.load({ duration: o.duration, title: 'settings', path: '/settings', connections }));
    return bench.compare({ ...result, connections }, { limit, limitDetail: { samples: rates },
      limitKind: 'bare uWS handler req/s, same threads', target: 0.8 });
  },
};
