// JSON text of a value the original answers as a Go map (map[string]interface{}, its JSONMap metadata):
// Go's encoder writes a map's members sorted by key in byte order, at every depth. JSON.stringify cannot
// be given that order through an object, which always lists integer-like keys ("9", "10") first, so the
// text is written here member by member, with Go's HTML-safe escapes (go-json-text.ts).
import { htmlSafe } from './go-json-text.js';

export function goMapJson(value: unknown): string {
  return htmlSafe(mapText(value));
}

function mapText(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => mapText(item ?? null)).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const members = Object.entries(value as Record<string, unknown>).filter(([, member]) => member !== undefined);
  members.sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${mapText(member)}`).join(',')}}`;
}
