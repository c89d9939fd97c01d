// The start-up check of SAML_PRIVATE_KEY and SAML_PRIVATE_KEY_NEXT (config/cross-field.ts), apart from
// keys.ts so that loading the configuration does not load node-forge, which only building the
// certificates needs (docs/sso-saml.md#keys).
import { createPrivateKey, type KeyObject } from 'node:crypto';

/**
 * The key's base64 without line breaks: the original's decoder skips them, so a key from `base64` without
 * `-w0` (76-column lines), as a Kubernetes Secret or a multi-line variable holds it, is the same key.
 */
export function samlKeyBase64(value: string): string {
  return value.replace(/[\r\n]/g, '');
}

/** Why a configured key cannot be used, in the original's words; null when it can. */
export function samlKeyProblem(value: string, which: '' | 'next '): string | null {
  const base64 = samlKeyBase64(value);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64) || base64.length % 4 !== 0) return `SAML ${which}private key not in standard Base64 format`;
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: Buffer.from(base64, 'base64'), format: 'der', type: 'pkcs1' });
  } catch {
    return `SAML ${which}private key not in PKCS#1 format`;
  }
  const details = key.asymmetricKeyDetails ?? {};
  if (details.publicExponent !== 65537n) return `SAML ${which}private key should use the 65537 (0x10001) RSA public exponent`;
  if ((details.modulusLength ?? 0) < 2048) return `SAML ${which}private key must be at least RSA 2048`;
  return null;
}
