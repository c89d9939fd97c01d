// For tests of what a repeated request answers, not of its send interval: forgets the sends the service
// pretended (rate_limits 'pretended_send:' rows), so the next request is a first one again, as it is after
// SMTP_MAX_FREQUENCY / SMS_MAX_FREQUENCY. The interval itself: test/send-interval-enumeration.test.ts.
import type { TestService } from './server.js';

export async function forgetPretendedSends(api: TestService): Promise<void> {
  await api.db.query(`delete from rate_limits where key like 'pretended\\_send:%'`);
}
