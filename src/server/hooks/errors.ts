// A hook answers failure with {"error": {"http_code": 4xx|5xx, "message": "..."}}; the client then gets that
// status and message, as from the original: error_code unexpected_failure for 500 (also when http_code is
// absent), unknown for any other status (docs/hooks.md#errors). An error object without a message is no error.
import { ApiError, apiError } from '../errors.js';

/** The hook's own error in `output`, or null. */
export function hookErrorOf(output: unknown): ApiError | null {
  if (!isObject(output) || !isObject(output.error)) return null;
  const { message, http_code: httpCode } = output.error;
  if (typeof message !== 'string' || message === '') return null;
  const status = typeof httpCode === 'number' && Number.isInteger(httpCode) && httpCode >= 400 && httpCode <= 599 ? httpCode : 500;
  if (status === 500) return apiError('hook_failed', message);
  const base = apiError('hook_error', message);
  return new ApiError(status, base.errorCode, message);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
