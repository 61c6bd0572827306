// Password reset by e-mail (API.md §10). `forgot` answers the same for every address: it counts the
// request against the e-mail's and the address's limits (the same work whether anyone has the
// e-mail), answers, and only then looks the user up and mails the link, in a queue of its own, so
// neither the body nor the timing tells whether the address has an account.
import type { Database, Transaction } from '../db/database.js';
import { SYSTEM_SCOPE, withTenant } from '../db/tenant-scope.js';
import { AppError } from '../errors.js';
import type { RequestLog, RequestMeta } from '../http/request-meta.js';
import type { RecordAudit } from '../audit/recorder.js';
import { MailError, type Mailer } from '../mail/mailer.js';
import { passwordResetMail } from './account-mails.js';
import { ADDRESS_MAX_FAILURES, clientKeyOf, LOGIN_MAX_FAILURES, LOGIN_WINDOW_MS } from './auth.service.js';
import type { CallerResolver } from './callers.js';
import { hashLinkToken, isLinkToken, newLinkToken } from './link-tokens.js';
import { hashPassword } from './passwords.js';
import * as resets from './password-resets.repo.js';
import { revokeUserSessions } from './sessions.repo.js';
import * as users from './users.repo.js';

export const RESET_TOKEN_TTL_MS = 30 * 60 * 1000;
/**
 * Requests per e-mail (known or not) within the window: "throttled like login" (API.md §10), so the
 * same 10 as sign-in's failures per e-mail. Enough retries, not a mailbox flood.
 */
export const FORGOT_MAX_PER_EMAIL = LOGIN_MAX_FAILURES;
/**
 * Requests per client address (IPv4, or IPv6 /64, as for sign-in) within the window, whatever the
 * e-mail: sign-in's 100, so an office behind one NAT (or a client's test suite) is not turned away.
 */
export const FORGOT_MAX_PER_ADDRESS = ADDRESS_MAX_FAILURES;
/** The window both limits count in: sign-in's 15 minutes. */
export const FORGOT_WINDOW_MS = LOGIN_WINDOW_MS;
/** Links waiting to be mailed; beyond this a request is answered but dropped (and logged), so a flood holds bounded memory. */
const MAX_QUEUED = 1000;

const resetInvalid = () => new AppError('TOKEN_INVALID', 'This password reset link is invalid, already used or expired');

export function createPasswordResetService(deps: {
  db: Database;
  callers: CallerResolver;
  recordAudit: RecordAudit;
  mailer: Mailer;
  publicUrl: string;
  now: () => number;
}) {
  const { db, callers, recordAudit, mailer, now } = deps;
  const system = <T>(fn: (tx: Transaction) => Promise<T>) => withTenant(db, SYSTEM_SCOPE, fn);

  // One link at a time, in order: the work after the answer never competes with requests for more
  // than one connection, and the order makes "nothing was sent" observable in tests.
  let tail: Promise<void> = Promise.resolve();
  let queued = 0;

  /** Runs job after the answer; its lines go to the request's log, so they carry its requestId. */
  function later(job: () => Promise<void>, log: RequestLog): void {
    if (queued >= MAX_QUEUED) {
      log.warn({ queued }, 'password reset queue full: a request was answered but not processed');
      return;
    }
    queued++;
    tail = tail.then(job).catch((err: unknown) => {
      // A MailError was logged by the mailer; anything else is logged here by its message only.
      if (!(err instanceof MailError)) log.error({ reason: (err as Error)?.message ?? String(err) }, 'password reset link could not be issued');
    }).finally(() => {
      queued--;
    });
  }

  async function mailResetLink(emailKey: string, log: RequestLog): Promise<void> {
    const token = newLinkToken('pwr');
    const at = new Date(now());
    const user = await system(async (tx) => {
      const found = await resets.findResettableUser(tx, emailKey);
      // A new link voids the earlier ones: only the latest mail works.
      if (found) await resets.issueResetToken(tx, found.id, hashLinkToken(token), at, new Date(at.getTime() + RESET_TOKEN_TTL_MS));
      return found;
    });
    if (!user) return;
    await mailer.send(passwordResetMail(user.email, `${deps.publicUrl}/reset-password#token=${token}`, RESET_TOKEN_TTL_MS / 60_000), log);
  }

  /**
   * Counts the request (429 over either limit, for known and unknown e-mails alike), answers, and
   * leaves the rest to the queue. A request refused by the limit is not counted again.
   */
  async function forgot(email: string, meta: RequestMeta): Promise<{ success: true }> {
    const emailKey = email.trim().toLowerCase();
    const clientKey = clientKeyOf(meta.ip);
    const at = now();
    const counts = await system(async (tx) => {
      await resets.lockResetRequests(tx, clientKey, emailKey);
      return resets.recordResetRequest(tx, {
        emailKey, clientKey, since: new Date(at - FORGOT_WINDOW_MS), at: new Date(at), addressMax: FORGOT_MAX_PER_ADDRESS, emailMax: FORGOT_MAX_PER_EMAIL,
      });
    });
    if (!counts.recorded) {
      const byAddress = counts.fromClient.count >= FORGOT_MAX_PER_ADDRESS;
      const oldest = (byAddress ? counts.fromClient.oldest : counts.forEmail.oldest)?.getTime() ?? at;
      const retryAfter = Math.max(1, Math.ceil((oldest + FORGOT_WINDOW_MS - at) / 1000));
      throw new AppError('RATE_LIMITED', `Too many password reset requests ${byAddress ? 'from this address' : 'for this e-mail'}; try again in ${retryAfter} seconds`, {
        headers: { 'retry-after': String(retryAfter) },
      });
    }
    later(() => mailResetLink(emailKey, meta.log), meta.log);
    return { success: true };
  }

  /**
   * Sets the password, uses the token and voids the user's others, and ends every session of the
   * user, in one transaction; the caller caches of every instance are cleared after it commits.
   * The token is checked before the password is hashed, so made-up tokens cost no argon2.
   */
  async function reset(token: string, password: string, meta: RequestMeta): Promise<{ success: true }> {
    if (!isLinkToken('pwr', token)) throw resetInvalid();
    const tokenHash = hashLinkToken(token);
    if (!(await system((tx) => resets.resetTokenUsable(tx, tokenHash, new Date(now()))))) throw resetInvalid();
    const passwordHash = await hashPassword(password);
    await system(async (tx) => {
      const at = new Date(now());
      const userId = await resets.useResetToken(tx, tokenHash, at);
      if (!userId) throw resetInvalid();
      // A user deleted or disabled since the link was mailed cannot come back through it.
      const user = await users.updateUser(tx, userId, { passwordHash });
      if (!user || user.disabled_at !== null) throw resetInvalid();
      await revokeUserSessions(tx, user.id, 'password reset', at, null);
      await recordAudit(tx, {
        orgId: user.org_id,
        actor: { type: 'user', id: user.id, email: user.email },
        action: 'user.password.reset',
        resource: { type: 'user', id: user.id, name: user.email },
        details: { sessionsEnded: true },
        ip: meta.ip,
        userAgent: meta.userAgent,
      });
    });
    callers.announceChange('password reset');
    return { success: true };
  }

  /** Resolves once every queued link has been handled (shutdown, tests). */
  const drain = async (): Promise<void> => {
    while (queued > 0) await tail;
  };

  return { forgot, reset, drain };
}

export type PasswordResetService = ReturnType<typeof createPasswordResetService>;
