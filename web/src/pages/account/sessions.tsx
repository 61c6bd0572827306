// The signed-in user's live sessions (API.md §10 GET /auth/sessions): which device, from where, when
// signed in and last used, with single sign-on and MFA marks. Each can be ended (ending this one signs
// out here), or every one but this.
import { api, call } from '../../api/client';
import { useSession } from '../../session/session';
import { ConfirmButton } from '../../ui/confirm';
import { formatDateTime } from '../../ui/format';
import { Pager } from '../../ui/pager';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useAction, type Loaded } from '../../ui/use-load';
import type { Ok } from '../../api/types';
import { Notice } from '../users/parts';
import { describeUserAgent } from './user-agent';
import { useNotice } from '../../ui/notice';

export type SessionList = Ok<'/api/v1/auth/sessions', 'get'>;
type SessionItem = SessionList['data'][number];

/** Each session's device in words; a second session with the same words also says when it began. */
function deviceNames(sessions: SessionItem[]): Map<string, string> {
  const plain = new Map(sessions.map((s) => [s.id, describeUserAgent(s.userAgent)]));
  const counts = new Map<string, number>();
  for (const name of plain.values()) counts.set(name, (counts.get(name) ?? 0) + 1);
  const dated = sessions.map((s) => {
    const name = plain.get(s.id)!;
    return [s.id, counts.get(name)! > 1 && !s.current ? `${name}, signed in ${formatDateTime(s.createdAt)}` : name] as const;
  });
  // Signed in within the same second from the same kind of client: numbered, so each Revoke button
  // still says which session it ends.
  const left = new Map<string, number>();
  for (const [, label] of dated) left.set(label, (left.get(label) ?? 0) + 1);
  const seen = new Map<string, number>();
  return new Map(dated.map(([id, label]) => {
    if (left.get(label)! < 2) return [id, label];
    const n = (seen.get(label) ?? 0) + 1;
    seen.set(label, n);
    return [id, `${label} (${n} of ${left.get(label)})`];
  }));
}

export function Sessions({ list, onPage }: { list: Loaded<SessionList>; onPage: (page: number) => void }) {
  const session = useSession();
  const [done, setDone] = useNotice();
  const revoke = useAction(async (s: SessionItem, name: string) => {
    setDone(null);
    await call(api.DELETE('/api/v1/auth/sessions/{id}', { params: { path: { id: s.id } } }));
    if (s.current) return session.signOut('You ended this session, so you are signed out.');
    setDone(`The session from ${name} has ended: that device is signed out.`);
    list.reload();
  });
  const revokeOthers = useAction(async () => {
    setDone(null);
    const { revoked } = await call(api.POST('/api/v1/auth/sessions/revoke-others'));
    setDone(revoked === 0 ? 'There was no other session to end.' : `Signed out ${revoked} other session${revoked === 1 ? '' : 's'}. Only this one is left.`);
    list.reload();
  });

  return (
    <section className="users-section" aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <p className="hint">Where your account is signed in. Ending a session signs that device out at once.</p>
      <Notice message={done} />
      <ErrorMessage error={revoke.error ?? revokeOthers.error} />
      <Loadable state={list}>
        {(body) => {
          const names = deviceNames(body.data);
          const others = body.pagination.total !== null ? body.pagination.total - 1 : body.data.filter((s) => !s.current).length;
          return (
            <>
              <ul className="account-sessions" aria-busy={list.loading}>
                {body.data.map((s) => {
                  const name = names.get(s.id)!;
                  return (
                    <li key={s.id} aria-labelledby={`session-${s.id}`}>
                      <h3 id={`session-${s.id}`}>
                        {name}
                        {s.current && <span className="badge badge-ok">this device</span>}
                        {s.sso && <span className="badge">single sign-on</span>}
                        <span className={s.mfaVerified ? 'badge badge-ok' : 'badge badge-muted'}>{s.mfaVerified ? 'MFA verified' : 'no MFA code'}</span>
                      </h3>
                      <dl className="props users-props">
                        <dt>Address</dt><dd>{s.ipAddress ?? 'unknown'}</dd>
                        <dt>Signed in</dt><dd>{formatDateTime(s.createdAt)}</dd>
                        <dt>Last used</dt><dd>{formatDateTime(s.lastUsedAt)}</dd>
                      </dl>
                      <button
                        type="button" disabled={revoke.pending}
                        aria-label={s.current ? `Sign out: revoke session from ${name} (this device)` : `Revoke session from ${name}`}
                        onClick={() => void revoke.run(s, name)}
                      >
                        {s.current ? 'Sign out' : 'Revoke'}
                      </button>
                    </li>
                  );
                })}
              </ul>
              {body.pagination.totalPages !== null && body.pagination.totalPages > 1 && <Pager list={body} onPage={onPage} label="Session pages" />}
              <ConfirmButton
                label="Sign out all other sessions" confirmLabel="Sign them out" disabled={others === 0 || revokeOthers.pending}
                question={<>Sign out every other session of your account ({others})? Those devices need to sign in again. This one stays signed in.</>}
                onConfirm={() => revokeOthers.run()}
              />
            </>
          );
        }}
      </Loadable>
    </section>
  );
}
