// The messages identity sends: an invitation and a password reset link. The link (and its token)
// is in the body only, never in the subject, which is what the outbox and the logs show.
import type { MailMessage } from '../mail/mailer.js';

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function message(to: string, subject: string, paragraphs: string[], link: string): MailMessage {
  const [before, ...after] = paragraphs;
  return {
    to,
    subject,
    text: `${before}\n\n${link}\n\n${after.join('\n\n')}\n`,
    html: `<p>${escapeHtml(before!)}</p>\n<p><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>\n` +
      after.map((p) => `<p>${escapeHtml(p)}</p>`).join('\n'),
  };
}

export function invitationMail(to: string, inviter: { name: string | null; email: string | null }, role: string, link: string, expiresAt: Date): MailMessage {
  const who = inviter.name && inviter.email ? `${inviter.name} (${inviter.email})` : (inviter.email ?? inviter.name ?? 'An administrator');
  return message(to, 'You are invited to Device Management', [
    `${who} invited you to Device Management with the role "${role}". To accept, open this link and choose a password:`,
    `The link works once and expires on ${expiresAt.toISOString()}.`,
    'If you did not expect this invitation, ignore this message.',
  ], link);
}

export function passwordResetMail(to: string, link: string, minutes: number): MailMessage {
  return message(to, 'Reset your Device Management password', [
    `Someone asked to reset the password of the Device Management account ${to}. To choose a new password, open this link:`,
    `The link works once and expires in ${minutes} minutes. Setting a new password signs the account out everywhere.`,
    'If you did not ask for this, ignore this message: your password stays as it is.',
  ], link);
}
