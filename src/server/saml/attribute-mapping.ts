// An attribute_mapping as the original stores and compares it: each rule keeps only its known fields
// that are set (a name, a non-empty names list, a default that is not null, array when true), and a
// mapping without rules is {}. Two mappings are the same when their rules are, which is when a PUT
// leaves the stored one alone (docs/sso-saml.md#identity-providers).
import { isDeepStrictEqual } from 'node:util';
import type { AttributeMapping } from '../../db/sso-providers.js';

type Rule = NonNullable<AttributeMapping['keys']>[string];

export function normalMapping(mapping: AttributeMapping | null): AttributeMapping {
  const entries = Object.entries(mapping?.keys ?? {});
  if (entries.length === 0) return {};
  return { keys: Object.fromEntries(entries.map(([claim, rule]) => [claim, normalRule(rule)])) };
}

function normalRule(rule: Rule): Rule {
  const out: Rule = {};
  if (rule?.name) out.name = rule.name;
  if (Array.isArray(rule?.names) && rule.names.length > 0) out.names = rule.names;
  if (rule?.default !== undefined && rule?.default !== null) out.default = rule.default;
  if (rule?.array === true) out.array = true;
  return out;
}

export function sameMapping(a: AttributeMapping | null, b: AttributeMapping | null): boolean {
  return isDeepStrictEqual(normalMapping(a), normalMapping(b));
}
