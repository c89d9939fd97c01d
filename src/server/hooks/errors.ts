// A hook answers failure with {"error": {"http_code": 4xx|5xx, "message": "..."}}; the client then gets that
// status and message, as from the original: error_code unexpected_failure for 500 (also when http_code is
// absent), unknown for any other status (docs/hooks.md#errors). An error object without a message is no error,
// nor is one the original cannot decode (an http_code that is not a whole number, a message that is not a
// string, an error that is not an object): the answer is then read as the hook's output.
import { ApiError, apiError } from '../errors.js';
import { decodeMembers, isObject, membersNamed } from './answer.js';

const ERROR_MEMBERS = { http_code: 'integer', message: 'string' } as const;

/** The hook's own error in `answer`, or null. */
export function hookErrorOf(answer: unknown): ApiError | null {
  if (!isObject(answer)) return null;
  const errors = membersNamed(answer, 'error');
  if (errors.some((e) => e !== null && !decodeMembers(e, ERROR_MEMBERS))) return null;
  const error = errors.at(-1);
  if (error === undefined || error === null) return null;
  const { message, http_code: httpCode } = decodeMembers(error, ERROR_MEMBERS)!;
  if (!message) return null;
  const status = httpCode !== undefined && httpCode >= 400 && httpCode <= 599 ? httpCode : 500;
  if (status === 500) return apiError('hook_failed', message);
  const base = apiError('hook_error', message);
  return new ApiError(status, base.errorCode, message);
}
