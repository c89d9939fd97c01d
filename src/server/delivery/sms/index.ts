// Picks the configured SMS gateway. One module per gateway, each speaking that gateway's real HTTP
// API (docs/sms.md#gateways) against a base URL from configuration, so tests point them at a local fake.
import type { Logger } from 'pino';
import type { Config, SmsGatewayName } from '../../config/types.js';
import { renderGoTemplate } from '../mail/go-template.js';
import type { GatewayClient } from './http.js';
import { logSmsSender } from './log-sender.js';
import { messagebirdSender } from './messagebird.js';
import { hideCode, SmsGatewayUnknownError, SmsSendError, type SmsChannel, type SmsSender } from './sender.js';
import { textlocalSender } from './textlocal.js';
import { twilioSender } from './twilio.js';
import { twilioVerifySender } from './twilio-verify.js';
import { vonageSender } from './vonage.js';

export { SmsChannelError, SmsGatewayUnknownError, SmsSendError, requireChannel } from './sender.js';
export type { SmsChannel, SmsSender } from './sender.js';

/** Each gateway's sender; its client (name and call timeout) is made once by createSmsSender. */
const GATEWAYS: Record<SmsGatewayName, (sms: Config['sms'], client: GatewayClient) => SmsSender> = {
  twilio: (sms, client) => twilioSender(sms.twilio, client),
  twilio_verify: (sms, client) => twilioVerifySender(sms.twilioVerify, client),
  messagebird: (sms, client) => messagebirdSender(sms.messagebird, client),
  textlocal: (sms, client) => textlocalSender(sms.textlocal, client),
  vonage: (sms, client) => vonageSender(sms.vonage, client),
};

/**
 * The sender for SMS_PROVIDER, each call to its gateway bounded by `timeoutSeconds` (INTERNAL_HTTP_TIMEOUT);
 * with none configured, a sender that logs (development only) or null (phone sign-ins cannot send codes;
 * callers answer accordingly).
 */
export function createSmsSender(
  sms: Config['sms'],
  timeoutSeconds: number,
  log: Logger,
  options: { development?: boolean } = {},
): SmsSender | null {
  const { provider } = sms;
  if (!provider) return options.development ? logSmsSender(log) : null;
  if (!isGateway(provider)) return unknownGatewaySender(provider);
  const sender = GATEWAYS[provider](sms, { gateway: provider, timeoutSeconds });
  if (sms.missingCredentials.length > 0) return unconfiguredSender(provider, sender.channels, sms.missingCredentials);
  return hidingCodes(sender);
}

/**
 * The one place gateways' errors pass on their way to callers: each keeps the code of its send (or of its
 * Twilio Verify check) out of its message, which callers put into the client's answer and the log
 * (hideCode; docs/sms.md#gateways).
 */
function hidingCodes(sender: SmsSender): SmsSender {
  const hiding = (code: string) => (err: unknown) => Promise.reject(hideCode(err, code));
  return {
    gateway: sender.gateway,
    channels: sender.channels,
    send: (to, body, channel, otp) => sender.send(to, body, channel, otp).catch(hiding(otp)),
    ...(sender.verifyOtp && { verifyOtp: (to: string, code: string) => sender.verifyOtp!(to, code).catch(hiding(code)) }),
  };
}

const isGateway = (name: string): name is SmsGatewayName => Object.hasOwn(GATEWAYS, name);

/**
 * SMS_PROVIDER naming no gateway: the service starts, as the original does, and every send fails with its
 * 500, since there is no gateway to ask (the start-up warning names the setting; docs/sms.md#gateways).
 * WhatsApp is no channel of it: the original allows it only when the name is twilio or twilio_verify, so a
 * WhatsApp code is refused up front (400) rather than failing at the send.
 */
function unknownGatewaySender(name: string): SmsSender {
  return {
    gateway: 'unknown',
    channels: ['sms'],
    send: () => Promise.reject(new SmsGatewayUnknownError(name)),
  };
}

/**
 * A gateway named with empty credentials: every send fails (422 sms_send_failed) without calling it. It
 * keeps the gateway's channels, so a channel the gateway cannot deliver is refused up front all the same.
 */
function unconfiguredSender(gateway: SmsGatewayName, channels: readonly SmsChannel[], missing: string[]): SmsSender {
  return {
    gateway,
    channels,
    send: () => Promise.reject(new SmsSendError(gateway, `${gateway} is not configured: ${missing.join(', ')} empty`)),
  };
}

/** SMS_TEMPLATE is a Go text/template with one variable, `.Code` (default "Your code is {{ .Code }}"). */
export function renderSmsTemplate(template: string, code: string): string {
  return renderGoTemplate(template, (path) => (path.length === 1 && path[0] === 'Code' ? code : undefined));
}
