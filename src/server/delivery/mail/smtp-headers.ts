// SMTP_HEADERS (docs/settings.md#mail): extra header fields on every mail, as the original's setting
// reads them: a JSON object of header name → list of values, where `$messageType` in a value becomes the
// mail's type (`confirmation`, `magic_link`, `password_changed_notification`, ...), so a relay can tag or
// route mail by kind.

/** Header name → values, as the setting holds them once read. */
export type SmtpHeaders = Readonly<Record<string, readonly string[]>>;

/**
 * The setting's JSON, or null when it is not an object of string lists (the original then ignores the
 * whole setting, with a warning; so does config/original-corrections.ts).
 */
export function parseSmtpHeaders(text: string): SmtpHeaders | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  for (const values of Object.values(value)) {
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'string')) return null;
  }
  return value as SmtpHeaders;
}

/**
 * The original's name of a mail type: our kind in snake case (magicLink → magic_link), except the
 * reauthentication mail, which it names `reauthenticate` there, kept from its older versions.
 */
export const messageTypeOf = (kind: string): string =>
  kind === 'reauthentication' ? 'reauthenticate' : kind.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * The header fields of one mail of `kind`, for nodemailer (one entry per value): empty names and empty
 * values are left out, and `$messageType` is filled in, as the original does.
 */
export function headerFieldsFor(headers: SmtpHeaders, kind: string): Array<{ key: string; value: string }> {
  const messageType = messageTypeOf(kind);
  const fields: Array<{ key: string; value: string }> = [];
  for (const [key, values] of Object.entries(headers)) {
    if (!key) continue;
    for (const value of values) if (value) fields.push({ key, value: value.replaceAll('$messageType', messageType) });
  }
  return fields;
}
