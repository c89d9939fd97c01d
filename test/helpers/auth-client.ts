// The official @supabase/auth-js client pointed at a test service, with in-memory storage (PKCE keeps
// its code verifier there) and no background refresh timers.
import { AuthClient } from '@supabase/auth-js';

export function memoryStorage() {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => {
      items.set(key, value);
    },
    removeItem: (key: string) => {
      items.delete(key);
    },
  };
}

export function authClient(url: string, options: { flowType?: 'implicit' | 'pkce' } = {}): InstanceType<typeof AuthClient> {
  return new AuthClient({
    url,
    storage: memoryStorage(),
    persistSession: true,
    autoRefreshToken: false,
    detectSessionInUrl: false,
    flowType: options.flowType ?? 'implicit',
  });
}
