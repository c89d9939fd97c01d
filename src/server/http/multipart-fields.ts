// A multipart/form-data body's text fields, read by the platform's own multipart parser (undici's
// Response.formData), for the few places where the original's Go request reading parses one: parts that
// carry a file are left out, as Go's multipart Form keeps them apart from its values.

/** The body's text fields in order; null when it does not parse (no boundary, a broken part, a missing close). */
export async function multipartFields(rawBody: Buffer, contentType: string): Promise<Array<[string, string]> | null> {
  const parsed = await new Response(new Uint8Array(rawBody), { headers: { 'content-type': contentType } }).formData().catch(() => null);
  if (!parsed) return null;
  const fields: Array<[string, string]> = [];
  for (const [name, value] of parsed) if (typeof value === 'string') fields.push([name, value]);
  return fields;
}
