// The `channel` field of phone flows: sms (default) or whatsapp (REFERENCE §10).
import { badRequest } from '../../errors.js';
import { SmsChannelError } from './index.js';

export function parseChannel(body: Record<string, unknown>): 'sms' | 'whatsapp' {
  const channel = body.channel ?? 'sms';
  if (channel === '' || channel === 'sms') return 'sms';
  if (channel === 'whatsapp') return 'whatsapp';
  throw badRequest(new SmsChannelError().message);
}
