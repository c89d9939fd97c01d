// PASSKEY_ENABLED gates every /passkeys route before anything else, as the original's middleware does
// (the admin passkey routes are not gated: an operator can always see and remove credentials).
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';

export function passkeysEnabled(ctx: AppContext): void {
  if (!ctx.config.passkey.enabled) throw apiError('passkey_disabled');
}
