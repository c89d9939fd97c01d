// The development stand-in for a gateway: with no SMS_PROVIDER in the embedded development setup,
// messages (code included, so the developer can sign in) go to the log instead of a phone.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { SmsSender } from './sender.js';

export function logSmsSender(log: Logger): SmsSender {
  log.warn('DEVELOPMENT SETUP: no SMS_PROVIDER, so SMS are NOT sent; each message (number, text, code) is written to this log instead');
  return {
    gateway: 'log',
    channels: ['sms', 'whatsapp'],
    send(to, body, channel, otp) {
      const messageId = `log-${randomUUID()}`;
      log.info({ sms: { to, channel, body, code: otp }, messageId }, 'SMS not sent (development, no SMS_PROVIDER): %s to +%s', channel, to);
      return Promise.resolve({ messageId });
    },
  };
}
