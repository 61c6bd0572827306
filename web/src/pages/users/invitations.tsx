// Invitations not accepted yet (API.md §10 GET /users/invitations; expired ones stay listed until
// withdrawn or replaced), each with its delete: the link in the e-mail stops working at once. The
// list keeps its own page number in the address (`invitationsPage`).
import { api, call } from '../../api/client';
import { ConfirmButton } from '../../ui/confirm';
import { formatDateTime } from '../../ui/format';
import { PAGE_SIZE, useListQuery } from '../../ui/list-query';
import { Pager } from '../../ui/pager';
import { StatusBadge } from '../../ui/status-badge';
import { ErrorMessage, Loadable } from '../../ui/states';
import { useAction, useLoad } from '../../ui/use-load';
import { Gated, type WriteGate } from '../../ui/write-gate';
import { Notice, TableScroll, WhereLinks } from './parts';
import type { Invitation, UserDirectory } from './user';
import { useNotice } from '../../ui/notice';

export function PendingInvitations({ directory, gate, refreshKey, invited }: {
  directory: UserDirectory | undefined;
  gate: WriteGate;
  /** Changes when an invitation was just sent, so the list is read again. */
  refreshKey: number;
  /** What to say about the invitation just sent. */
  invited: string | null;
}) {
  const query = useListQuery([], 'invitationsPage');
  const list = useLoad(() => call(api.GET('/api/v1/users/invitations', { params: { query: { page: query.page, limit: PAGE_SIZE } } })), [query.key, refreshKey]);
  const [done, setDone] = useNotice();
  const remove = useAction(async (invitation: Invitation) => {
    setDone(null);
    await call(api.DELETE('/api/v1/users/invitations/{id}', { params: { path: { id: invitation.id } } }));
    setDone(`Invitation for ${invitation.email} deleted: its link no longer works.`);
    list.reload();
  });

  return (
    <section className="users-section" aria-labelledby="invitations-title">
      <h2 id="invitations-title">Pending invitations</h2>
      <Notice message={done ?? invited} />
      <ErrorMessage error={remove.error} />
      <Loadable state={list} isEmpty={(body) => body.data.length === 0} empty="No invitation is waiting to be accepted.">
        {(body) => (
          <>
            <TableScroll label="Pending invitations table">
              <table className="users-table" aria-labelledby="invitations-title" aria-busy={list.loading}>
                <thead>
                  <tr>
                    <th scope="col">E-mail</th>
                    <th scope="col">Name</th>
                    <th scope="col">Role</th>
                    <th scope="col">Belongs to</th>
                    <th scope="col">Expires</th>
                    <th scope="col"><span className="users-sr">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  {body.data.map((inv) => (
                    <tr key={inv.id}>
                      <th scope="row">{inv.email}</th>
                      <td>{inv.name}</td>
                      <td>{inv.role}</td>
                      <td><WhereLinks item={inv} directory={directory} /></td>
                      <td>
                        {Date.parse(inv.expiresAt) < Date.now()
                          ? <><StatusBadge status="expired" /> <span className="hint">since {formatDateTime(inv.expiresAt)}; invite again to send a new link</span></>
                          : formatDateTime(inv.expiresAt)}
                      </td>
                      <td>
                        <Gated allowed={gate.allowed} label="Delete">
                          <ConfirmButton
                            label="Delete" name={`Delete invitation for ${inv.email}`} confirmLabel="Delete the invitation" disabled={remove.pending}
                            question={<>Delete the invitation for {inv.name} ({inv.email})? The link in the e-mail stops working; you can invite them again later.</>}
                            onConfirm={() => remove.run(inv)}
                          />
                        </Gated>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <Pager list={body} onPage={query.setPage} label="Invitation pages" />
          </>
        )}
      </Loadable>
    </section>
  );
}
