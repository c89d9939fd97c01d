// The scenarios by name, in the order `npm run bench` runs them.
import tokenPassword from './token-password.mjs';
import tokenRefresh from './token-refresh.mjs';
import user from './user.mjs';
import settings from './settings.mjs';
import signup from './signup.mjs';
import mixed from './mixed.mjs';
import overload from './overload.mjs';
import { tokenRefreshEs256, userEs256, tokenRefreshHookHttp, tokenRefreshHookPg } from './variants.mjs';

export const SCENARIO_MODULES = Object.fromEntries(
  [
    tokenPassword,
    tokenRefresh,
    user,
    settings,
    signup,
    mixed,
    overload,
    tokenRefreshEs256,
    userEs256,
    tokenRefreshHookHttp,
    tokenRefreshHookPg,
  ].map((s) => [s.name, s]),
);
