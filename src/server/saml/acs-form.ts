// The fields of a post to the ACS, read where the original's Go request reading finds them: RelayState,
// SAMLart and (only to pick the provider of an IdP-initiated post) SAMLResponse from the form, that is the
// posted body's first value before the query's (the query's first for a multipart body, which Go reads
// after it); but the SAMLResponse that is verified comes from the posted body alone, as the original's
// SAML library reads it. An assertion put in the URL (and so in access logs and browser history) signs
// nobody in.
import type { ApiRequest } from '../http/types.js';
import { mediaTypeOf } from '../http/media-type.js';
import { goQueryValues } from '../http/go-query.js';
import { multipartFields } from '../http/multipart-fields.js';

export interface AcsForm {
  relayState: string;
  artifact: string;
  /** the form's SAMLResponse: names the IdP of an IdP-initiated post */
  samlResponse: string;
  /** the posted body's SAMLResponse: the only one verified */
  postedResponse: string;
}

export async function readAcsForm(req: ApiRequest): Promise<AcsForm> {
  const { fields, beforeQuery } = await postedForm(req);
  const field = (name: string) =>
    (beforeQuery ? (fields.get(name) ?? req.query.get(name)) : (req.query.get(name) ?? fields.get(name))) ?? '';
  return {
    relayState: field('RelayState'),
    artifact: field('SAMLart'),
    samlResponse: field('SAMLResponse'),
    postedResponse: fields.get('SAMLResponse') ?? '',
  };
}

/**
 * The body's fields: a urlencoded body's, or a multipart body's text parts (an IdP's form may be posted
 * either way); none for another type, or for a multipart body that does not parse. The media type is
 * matched ignoring case and parameters, as Go's mime parsing does.
 */
async function postedForm(req: ApiRequest): Promise<{ fields: Map<string, string>; beforeQuery: boolean }> {
  const type = mediaTypeOf(req);
  const fields = new Map<string, string>();
  const add = (name: string, value: string) => {
    if (!fields.has(name)) fields.set(name, value);
  };
  if (req.method !== 'POST') return { fields, beforeQuery: true };
  if (type === 'application/x-www-form-urlencoded') {
    for (const [name, value] of goQueryValues(req.rawBody.toString('utf8'))) add(name, value);
    return { fields, beforeQuery: true };
  }
  if (type === 'multipart/form-data') {
    for (const [name, value] of (await multipartFields(req.rawBody, req.headers['content-type'] ?? '')) ?? []) add(name, value);
  }
  return { fields, beforeQuery: false };
}
