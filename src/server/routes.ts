// The route table: one line per endpoint, with its guards (per-client limit, captcha). Handlers live in
// routes/ (one file per endpoint family) and grants/ (one module per /token grant).
import type { Route } from './http/types.js';
import { health } from './routes/health.js';
import { ready } from './routes/ready.js';
import { settings } from './routes/settings.js';
import { jwks } from './routes/jwks.js';
import { signup } from './routes/signup.js';
import { token } from './routes/token.js';
import { verifyGet, verifyPost } from './routes/verify.js';
import { getUser } from './routes/user.js';
import { otp } from './routes/otp.js';
import { magiclink } from './routes/magiclink.js';
import { recover } from './routes/recover.js';
import { limited } from './limits/per-client.js';
import { captchaChecked, uncheckedGrant } from './auth/captcha-guard.js';
import { adminListUsers, adminGetUser } from './routes/admin-users-read.js';
import { adminCreateUser } from './routes/admin-users-create.js';
import { adminUpdateUser } from './routes/admin-users-update.js';
import { adminDeleteUser } from './routes/admin-users-delete.js';
import { adminGenerateLink } from './routes/admin-generate-link.js';
import { invite } from './routes/invite.js';
import { adminAuditLog } from './routes/admin-audit.js';
import { logout } from './routes/logout.js';
import { putUser } from './routes/user-update.js';
import { reauthenticate } from './routes/reauthenticate.js';
import { resend } from './routes/resend.js';
import { sso } from './routes/sso.js';

export const ROUTES: Route[] = [
  { method: 'GET', path: '/health', handler: health, quiet: true },
  { method: 'GET', path: '/ready', handler: ready, quiet: true },
  { method: 'GET', path: '/settings', handler: settings },
  { method: 'GET', path: '/.well-known/jwks.json', handler: jwks },
  { method: 'POST', path: '/signup', handler: limited('signup', captchaChecked(signup)) },
  { method: 'POST', path: '/token', handler: limited('token', captchaChecked(token, uncheckedGrant)) },
  { method: 'GET', path: '/verify', handler: limited('verify', verifyGet) },
  { method: 'POST', path: '/verify', handler: limited('verify', verifyPost) },
  { method: 'GET', path: '/user', handler: getUser },
  { method: 'POST', path: '/otp', handler: limited('otp', captchaChecked(otp)) },
  { method: 'POST', path: '/magiclink', handler: limited('otp', captchaChecked(magiclink)) },
  { method: 'POST', path: '/recover', handler: limited('otp', captchaChecked(recover)) },
  { method: 'GET', path: '/admin/users', handler: adminListUsers },
  { method: 'POST', path: '/admin/users', handler: adminCreateUser },
  { method: 'GET', path: '/admin/users/{user_id}', handler: adminGetUser },
  { method: 'POST', path: '/admin/users/{user_id}', handler: adminCreateUser },
  { method: 'PUT', path: '/admin/users/{user_id}', handler: adminUpdateUser },
  { method: 'DELETE', path: '/admin/users/{user_id}', handler: adminDeleteUser },
  { method: 'POST', path: '/admin/generate_link', handler: adminGenerateLink },
  { method: 'POST', path: '/invite', handler: invite },
  { method: 'GET', path: '/admin/audit', handler: adminAuditLog },
  { method: 'PUT', path: '/user', handler: limited('otp', putUser) },
  { method: 'POST', path: '/logout', handler: logout },
  { method: 'GET', path: '/reauthenticate', handler: reauthenticate },
  { method: 'POST', path: '/resend', handler: limited('otp', captchaChecked(resend)) },
  { method: 'POST', path: '/sso', handler: sso },
];
