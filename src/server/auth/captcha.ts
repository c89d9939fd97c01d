// Captcha verification (docs/captcha.md#asking-the-provider): hCaptcha and Cloudflare Turnstile share one siteverify wire
// format — a form-encoded POST of secret, response and remoteip, answered by JSON
// {success, "error-codes": [...]} — so one client serves both; only the default URL differs.
import type { Config } from '../config/types.js';
import { readCappedJson } from '../outbound-body.js';

/** A siteverify answer is a few hundred bytes; anything past this is not read. */
const CAPTCHA_ANSWER_MAX_BYTES = 64 * 1024;

export type CaptchaConfig = Config['security']['captcha'];

const VERIFY_URLS: Record<CaptchaConfig['provider'], string> = {
  hcaptcha: 'https://hcaptcha.com/siteverify',
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
};

export interface CaptchaVerdict {
  success: boolean;
  errorCodes: string[];
}

/** SECURITY_CAPTCHA_VERIFY_URL (tests point it at a local fake), else the provider's own endpoint. */
export const verifyUrlOf = (config: CaptchaConfig): string => config.verifyUrl || VERIFY_URLS[config.provider];

/**
 * Asks the provider about one token. Throws when the provider cannot be asked or gives no readable
 * answer within SECURITY_CAPTCHA_TIMEOUT, so a stalled provider costs the client that long and no more.
 */
export async function verifyCaptchaToken(config: CaptchaConfig, token: string, remoteIp: string): Promise<CaptchaVerdict> {
  const form = new URLSearchParams({ secret: config.secret.trim(), response: token });
  if (remoteIp) form.set('remoteip', remoteIp);
  const res = await fetch(verifyUrlOf(config), {
    method: 'POST',
    body: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    // A 307 or 308 would post the form, secret included, again wherever it points (the original's Go client
    // follows it): no siteverify answers with a redirect, so it is an answer without a verdict.
    redirect: 'manual',
    signal: AbortSignal.timeout(config.timeoutSeconds * 1000),
  });
  const reply = (await readCappedJson(
    res,
    CAPTCHA_ANSWER_MAX_BYTES,
    () => new Error(`captcha provider answered more than ${CAPTCHA_ANSWER_MAX_BYTES} bytes`),
  )) as { success?: unknown; 'error-codes'?: unknown } | undefined;
  if (typeof reply !== 'object' || reply === null || typeof reply.success !== 'boolean') {
    throw new Error(`captcha provider answered ${res.status} without a success field`);
  }
  const codes = Array.isArray(reply['error-codes']) ? reply['error-codes'].map(String) : [];
  return { success: reply.success, errorCodes: codes };
}
