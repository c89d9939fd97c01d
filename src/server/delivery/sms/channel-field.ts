// The `channel` field of phone flows: sms (default) or whatsapp (docs/sms.md#channels).
import { apiError } from '../../errors.js';

/** The channel field of a route's body schema: any value, refused here with the original's message. */
export const CHANNEL_FIELD = { channel: 'unknown' } as const;

export function parseChannel(body: Record<string, unknown>): 'sms' | 'whatsapp' {
  const channel = body.channel ?? 'sms';
  if (channel === '' || channel === 'sms') return 'sms';
  if (channel === 'whatsapp') return 'whatsapp';
  throw apiError('sms_channel_invalid');
}
