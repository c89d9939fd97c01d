// Parsing untrusted XML (IdP metadata, a SAMLResponse peeked at for its Issuer): @xmldom/xmldom, stopping at
// the first error and refusing any DOCTYPE, so no entity is ever declared or expanded. Signatures are never
// checked on these trees: verification is node-saml's, on the raw response (saml/verify-response.ts).
import { DOMParser, onErrorStopParsing, type Document, type Element } from '@xmldom/xmldom';

export class XmlProblem extends Error {}

export function parseXml(text: string): Document {
  if (/<!DOCTYPE/i.test(text)) throw new XmlProblem('XML with a DOCTYPE is not accepted');
  try {
    const doc = new DOMParser({ onError: onErrorStopParsing }).parseFromString(text, 'text/xml');
    if (!doc.documentElement) throw new XmlProblem('no root element');
    return doc;
  } catch (err) {
    if (err instanceof XmlProblem) throw err;
    throw new XmlProblem(err instanceof Error ? err.message : 'not XML');
  }
}

/** The element children of `parent` with this local name (any namespace prefix). */
export function children(parent: Element, localName: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1 && (node as Element).localName === localName) found.push(node as Element);
  }
  return found;
}

/** All descendant elements with this local name, in document order. */
export function descendants(parent: Element, localName: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS('*', localName));
}

export const textOf = (el: Element | undefined): string => (el?.textContent ?? '').trim();

/** Escapes text for an XML attribute or element body. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}
