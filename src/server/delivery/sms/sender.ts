// What every SMS gateway module exports, and the two errors callers map to HTTP answers.
import { ERRORS } from '../../errors.js';
import type { SmsGatewayName } from '../../config/types.js';

export type SmsChannel = 'sms' | 'whatsapp';

export interface SmsSender {
  /** which gateway this is ('log' for the development sender that only writes to the log) */
  readonly gateway: SmsGatewayName | 'log' | 'unknown';
  /** the channels this gateway accepts; others make send() throw SmsChannelError */
  readonly channels: readonly SmsChannel[];
  /**
   * Sends `body` to `to` (digits, no '+'). `otp` is the bare code, for gateways that template it
   * themselves (Twilio WhatsApp content templates). Rejects with SmsSendError when the gateway refuses.
   */
  send(to: string, body: string, channel: SmsChannel, otp: string): Promise<{ messageId: string }>;
  /** twilio_verify only: the gateway generated the code, so only the gateway can check it. */
  verifyOtp?(to: string, code: string): Promise<boolean>;
}

/** The gateway refused or could not be reached. Callers answer 422 sms_send_failed with this message. */
export class SmsSendError extends Error {
  override readonly name = 'SmsSendError';
  constructor(
    readonly gateway: SmsGatewayName,
    message: string,
    readonly httpStatus?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** What a one-time code becomes in a gateway's error text (hideCode). */
export const HIDDEN_CODE = '[code]';

/**
 * `err` with every occurrence of `code` in its message (and stack) replaced by HIDDEN_CODE. A gateway's error
 * text reaches the client's 422 answer and the request log as it is; one that echoes the text sent (or a proxy
 * or impostor in its place) would repeat the one-time code there. Other errors pass unchanged.
 */
export function hideCode(err: unknown, code: string): unknown {
  if (!(err instanceof SmsSendError) || !code || !err.message.includes(code)) return err;
  const hidden = new SmsSendError(err.gateway, err.message.replaceAll(code, HIDDEN_CODE), err.httpStatus, { cause: err.cause });
  if (err.stack) hidden.stack = err.stack.replaceAll(code, HIDDEN_CODE);
  return hidden;
}

/**
 * SMS_PROVIDER names no gateway, so there is none to ask. Callers answer the original's 500 (its
 * "Unable to get SMS provider", or "Failed to get SMS provider" for an MFA challenge).
 */
export class SmsGatewayUnknownError extends Error {
  override readonly name = 'SmsGatewayUnknownError';
  constructor(readonly provider: string) {
    super(`SMS_PROVIDER ${provider} could not be found`);
  }
}

/** A channel this gateway cannot deliver on. Callers answer 400 validation_failed with this message. */
export class SmsChannelError extends Error {
  override readonly name = 'SmsChannelError';
  constructor() {
    super(ERRORS.sms_channel_invalid.msg);
  }
}

/** Throws SmsChannelError unless `sender` supports `channel`. */
export function requireChannel(sender: Pick<SmsSender, 'channels'>, channel: SmsChannel): void {
  if (!sender.channels.includes(channel)) throw new SmsChannelError();
}
