// The scopes the OAuth 2.1 server knows (the original's list), and how a scope string is read: split on
// spaces, empty parts dropped.
export const SUPPORTED_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access'] as const;

export const parseScopes = (scope: string | null | undefined): string[] =>
  (scope ?? '')
    .split(' ')
    .filter((s) => s.trim() !== '')
    .map((s) => s.trim());

export const isSupportedScope = (scope: string): boolean => (SUPPORTED_SCOPES as readonly string[]).includes(scope);

export const hasAllScopes = (granted: string[], requested: string[]): boolean => requested.every((s) => granted.includes(s));
