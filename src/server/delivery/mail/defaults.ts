// The built-in HTML bodies, used when MAILER_TEMPLATES_X is unset or its URL cannot be fetched.
// docs/one-time-codes-and-mail.md#built-in-mails: "a heading, one sentence, and a link to ConfirmationURL". Headings and link texts are the ones
// of the original service's era that docs/one-time-codes-and-mail.md#built-in-mails describes (), so users see familiar mails;
// each also carries the code, so a user on another device can type it instead of following the link.
import type { MailTemplateSet } from '../../config/types.js';

const CODE = '<p>Alternatively, enter the code: {{ .Token }}</p>';

const linkMail = (heading: string, sentence: string, linkText: string): string =>
  `<h2>${heading}</h2>\n\n<p>${sentence}</p>\n<p><a href="{{ .ConfirmationURL }}">${linkText}</a></p>\n${CODE}\n`;

const notice = (heading: string, sentence: string): string =>
  `<h2>${heading}</h2>\n\n<p>${sentence}</p>\n<p>If this was not you, secure your account and contact us at once.</p>\n`;

export const DEFAULT_TEMPLATES: Readonly<MailTemplateSet<string>> = Object.freeze({
  invite: linkMail(
    'You have been invited',
    'You have been invited to create an account on {{ .SiteURL }}. Follow this link to accept:',
    'Accept the invite',
  ),
  confirmation: linkMail('Confirm your signup', 'Follow this link to confirm your email address:', 'Confirm your mail'),
  recovery: linkMail('Reset password', 'Follow this link to choose a new password:', 'Reset password'),
  magicLink: linkMail('Magic Link', 'Follow this link to sign in:', 'Log In'),
  emailChange: linkMail(
    'Confirm email address change',
    'Follow this link to confirm changing your email address {{ if .Email }}from {{ .Email }} {{ end }}to {{ .NewEmail }}:',
    'Change email address',
  ),
  reauthentication: '<h2>Confirm reauthentication</h2>\n\n<p>Enter the code: {{ .Token }}</p>\n',
  // The account-change notifications carry no link or code: they tell the user what changed, so that a
  // change the user did not make is noticed (docs/one-time-codes-and-mail.md#account-change-notifications).
  passwordChangedNotification: notice('Password changed', 'The password of your account {{ .Email }} has just been changed.'),
  emailChangedNotification: notice(
    'Email address changed',
    'The email address of your account has just been changed from {{ .OldEmail }} to {{ .Email }}.',
  ),
  phoneChangedNotification: notice(
    'Phone number changed',
    'The phone number of your account {{ .Email }} has just been changed from {{ .OldPhone }} to {{ .Phone }}.',
  ),
  identityLinkedNotification: notice('Sign-in method added', 'You can now sign in to your account {{ .Email }} with {{ .Provider }}.'),
  identityUnlinkedNotification: notice(
    'Sign-in method removed',
    '{{ .Provider }} can no longer be used to sign in to your account {{ .Email }}.',
  ),
  mfaFactorEnrolledNotification: notice(
    'Verification method added',
    'A {{ .FactorType }} verification method has been added to your account {{ .Email }}.',
  ),
  mfaFactorUnenrolledNotification: notice(
    'Verification method removed',
    'A {{ .FactorType }} verification method has been removed from your account {{ .Email }}.',
  ),
});
