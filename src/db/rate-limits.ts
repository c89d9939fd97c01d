// rate_limits: counters shared by every HTTP thread and instance. Each check is one atomic statement that
// returns a row when the request is allowed and none when it is denied (the upsert's WHERE refuses).
import type { Queryable } from './pool.js';

/** Fixed window: at most `max` per `periodSeconds`, the window starting at its first use. */
export async function takeFromWindow(q: Queryable, key: string, max: number, periodSeconds: number): Promise<boolean> {
  if (max <= 0) return false;
  const { rowCount } = await q.query({
    name: 'rate_window',
    text: `insert into rate_limits (key, window_start, count, updated_at) values ($1, now(), 1, now())
           on conflict (key) do update set
             count = case when rate_limits.window_start + make_interval(secs => $3) <= now() then 1 else rate_limits.count + 1 end,
             window_start = case when rate_limits.window_start + make_interval(secs => $3) <= now() then now() else rate_limits.window_start end,
             updated_at = now()
           where rate_limits.window_start + make_interval(secs => $3) <= now() or rate_limits.count < $2
           returning count`,
    values: [key, max, periodSeconds],
  });
  return rowCount === 1;
}

/** Token bucket: holds up to `burst` tokens and regains one every `secondsPerToken`. */
export async function takeFromBucket(q: Queryable, key: string, burst: number, secondsPerToken: number): Promise<boolean> {
  if (burst <= 0) return false;
  const { rowCount } = await q.query({
    name: 'rate_bucket',
    text: `insert into rate_limits (key, tokens, updated_at) values ($1, $2 - 1, now())
           on conflict (key) do update set
             tokens = least($2, rate_limits.tokens + extract(epoch from now() - rate_limits.updated_at) / $3) - 1,
             updated_at = now()
           where least($2, rate_limits.tokens + extract(epoch from now() - rate_limits.updated_at) / $3) >= 1
           returning tokens`,
    values: [key, burst, secondsPerToken],
  });
  return rowCount === 1;
}
