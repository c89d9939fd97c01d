// A hook's answer decoded as the original decodes it (docs/hooks.md#answers): the text must be JSON, and
// each hook's output is an object whose members, when present and not null, have their type. Anything
// else is the original's 500 "Error unmarshaling JSON output." and stops the request: a malformed answer
// never lets a gatekeeping hook's request through. Members are matched by name as the original matches
// them: exactly, else ignoring case ("Decision" is decision).
import { apiError, type ApiError } from '../errors.js';
import { foldedName } from '../http/field-names.js';

/** What a transport resolves when the hook gave no output at all: HTTP 204, or a function's SQL null. */
export const NO_ANSWER = undefined;

export type MemberType = 'string' | 'boolean' | 'integer';
type Value<T extends MemberType> = T extends 'string' ? string : T extends 'boolean' ? boolean : number;
export type Decoded<F extends Record<string, MemberType>> = { [K in keyof F]?: Value<F[K]> };

export const undecodable = (): ApiError => apiError('hook_failed', 'Error unmarshaling JSON output.');

/** The answer's text parsed, or the original's 500 (an empty 200 body included). */
export function parseAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw undecodable();
  }
}

/**
 * The hook's output with the given typed members; `{}` for no answer and for `null`, which the original
 * accepts as an empty output.
 */
export function decodeOutput<F extends Record<string, MemberType>>(answer: unknown, members: F): Decoded<F> {
  if (answer === NO_ANSWER || answer === null) return {};
  const decoded = decodeMembers(answer, members);
  if (!decoded) throw undecodable();
  return decoded;
}

/** The output of a hook that expects nothing back: its answer must still be null or an object. */
export const noOutput = (answer: unknown): void => void decodeOutput(answer, {});

/** The typed members of an object, or null when it is not one or a member has the wrong type. */
export function decodeMembers<F extends Record<string, MemberType>>(value: unknown, members: F): Decoded<F> | null {
  if (!isObject(value)) return null;
  const decoded: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    const name = foldedName(key); // the member names are lower case
    if (!Object.hasOwn(members, name)) continue;
    // null leaves a member as it was, as the original decodes it; a later duplicate overrides an earlier one.
    if (member === null) continue;
    if (!hasType(member, members[name])) return null;
    decoded[name] = member;
  }
  return decoded as Decoded<F>;
}

/** The members named `name` (matched as decodeMembers matches them), in order. */
export function membersNamed(value: Record<string, unknown>, name: string): unknown[] {
  return Object.entries(value)
    .filter(([key]) => foldedName(key) === name)
    .map(([, member]) => member);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function hasType(value: unknown, type: MemberType): boolean {
  // An integer member takes a whole number the original's int holds; 403.5 or 1e30 do not decode.
  return type === 'integer' ? Number.isSafeInteger(value) : typeof value === type;
}
