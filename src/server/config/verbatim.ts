// The settings whose text is used exactly as given, white space at either end included; every other value
// is trimmed before it is converted (convert.ts). The original trims none of its strings: a secret's bytes
// are the key (a JWT_SECRET ending in the line break of the file a Kubernetes Secret was made from signs
// with that line break, there and so here), a credential is sent as given, and a text is shown as
// written. Numbers, switches, names from a list, URLs and identifiers stay trimmed: white space there can
// only be a slip. Secrets the original trims itself (SECURITY_CAPTCHA_SECRET) or only base64-decodes (the
// SAML and hook keys, whose decoding ignores line breaks) are trimmed too (docs/settings.md#value-syntax).
import { SMS_REQUIRED } from './settings.js';

const VERBATIM = new Set([
  'JWT_SECRET',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'SMTP_USER',
  'SMTP_PASS',
  'SMTP_SENDER_NAME',
  'PASSWORD_REQUIRED_CHARACTERS',
  'WEBAUTHN_RP_DISPLAY_NAME',
  'SMS_TEMPLATE',
  'MFA_PHONE_TEMPLATE',
  'SMS_TWILIO_CONTENT_SID',
  // every gateway's credentials and sender name
  ...Object.values(SMS_REQUIRED).flat(),
]);

/** True when a setting's text must not be trimmed: a secret, a credential or a free text. */
export function keptVerbatim(name: string): boolean {
  return VERBATIM.has(name) || /^EXTERNAL_[A-Z_]+_SECRET$/.test(name) || name.startsWith('MAILER_SUBJECTS_');
}
