// The partner's display order of its organizations: drag and drop, or the "Move up" / "Move down"
// buttons (keyboard), each named with its organization after the visible words ("Move up: Acme"), so
// screen readers say which and voice control still matches "Move up". Read from GET /orgs (which
// returns the saved order), or for a system user on a partner's page from that partner's list;
// every move is saved at once with PATCH /orgs/organizations/order (naming the partner for a system
// user), one request at a time, and the list then shows the order the server answered. A failed
// save puts back the last order the server confirmed.
import { useEffect, useId, useRef, useState, type DragEvent } from 'react';
import { Link } from 'react-router';
import { api, call, ApiError } from '../../api/client';
import { ErrorMessage, Loadable } from '../../ui/states';
import { StatusBadge } from '../../ui/status-badge';
import type { Organization } from './resources';
import { loadOrganizations } from '../../api/directory';
import { loadPartnerOrganizations } from './data';
import { useLoad, type Loaded } from '../../ui/use-load';

type SaveState = 'idle' | 'saving' | 'saved' | 'error';

/** `partnerId`: a system user ordering that partner's organizations; without it, the caller's own partner. */
export function OrganizationOrder({ partnerId, onSaved }: { partnerId?: string; onSaved: () => void }) {
  const loaded = useOrganizationsToOrder(partnerId);
  return (
    <section className="panel tenancy-section" aria-labelledby="org-order-title">
      <h2 id="org-order-title">Display order</h2>
      <p className="hint">
        Drag an organization to a new place, or use its Move up and Move down buttons. Every change is saved at once,
        and every list of {partnerId ? 'this partner’s' : 'your'} organizations follows this order.
      </p>
      <Loadable state={loaded} isEmpty={(orgs) => orgs.length === 0} empty="There are no organizations to order yet.">
        {(orgs) => <OrderList initial={orgs} partnerId={partnerId} onSaved={onSaved} />}
      </Loadable>
    </section>
  );
}

function useOrganizationsToOrder(partnerId: string | undefined): Loaded<Organization[]> {
  return useLoad(() => (partnerId ? loadPartnerOrganizations(partnerId) : loadOrganizations()), [partnerId]);
}

function OrderList({ initial, partnerId, onSaved }: { initial: Organization[]; partnerId: string | undefined; onSaved: () => void }) {
  const [order, setOrder] = useState(initial);
  const confirmed = useRef(initial);
  const [state, setState] = useState<SaveState>('idle');
  const [error, setError] = useState<ApiError | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const queue = useRef<Promise<void>>(Promise.resolve());
  const latest = useRef(0);
  const [dragId, setDragId] = useState<string | null>(null);
  const [drop, setDrop] = useState<{ id: string; after: boolean } | null>(null);
  const buttons = useRef(new Map<string, HTMLButtonElement>());
  const [focusAfterMove, setFocusAfterMove] = useState<string | null>(null);
  const baseId = useId();

  useEffect(() => {
    setOrder(initial);
    confirmed.current = initial;
  }, [initial]);

  // Keep the keyboard user's focus on the button of the organization that moved.
  useEffect(() => {
    if (!focusAfterMove) return;
    const [id, direction] = focusAfterMove.split('|') as [string, 'up' | 'down'];
    const target = buttons.current.get(`${id}|${direction}`);
    const other = buttons.current.get(`${id}|${direction === 'up' ? 'down' : 'up'}`);
    (target && !target.disabled ? target : other)?.focus();
    setFocusAfterMove(null);
  }, [focusAfterMove, order]);

  const save = (next: Organization[], said: string) => {
    setOrder(next);
    setState('saving');
    setError(null);
    setAnnouncement(said);
    const mine = ++latest.current;
    queue.current = queue.current.then(async () => {
      try {
        const answer = await call(api.PATCH('/api/v1/orgs/organizations/order', { body: { organizationOrder: next.map((o) => o.id), ...(partnerId ? { partnerId } : {}) } }));
        const byId = new Map(next.map((o) => [o.id, o]));
        const shown = answer.organizationOrder.flatMap((id) => byId.get(id) ?? []);
        confirmed.current = shown;
        if (mine !== latest.current) return;
        setOrder(shown);
        setState('saved');
        onSaved();
      } catch (err) {
        if (mine !== latest.current) return;
        setOrder(confirmed.current);
        setState('error');
        setError(err instanceof ApiError ? err : new ApiError(0, 'CLIENT', (err as Error).message));
        setAnnouncement('');
      }
    });
  };

  const move = (from: number, to: number, focus?: 'up' | 'down') => {
    if (to < 0 || to >= order.length || from === to) return;
    const next = [...order];
    const [item] = next.splice(from, 1);
    next.splice(to, 0, item!);
    if (focus) setFocusAfterMove(`${item!.id}|${focus}`);
    save(next, `${item!.name} moved to position ${to + 1} of ${next.length}.`);
  };

  const onDragOver = (e: DragEvent<HTMLLIElement>, id: string) => {
    if (!dragId) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'move';
    const box = e.currentTarget.getBoundingClientRect();
    const after = e.clientY > box.top + box.height / 2;
    if (drop?.id !== id || drop.after !== after) setDrop({ id, after });
  };

  const onDrop = (e: DragEvent<HTMLLIElement>, id: string) => {
    e.preventDefault();
    const dragged = dragId ?? e.dataTransfer.getData('text/plain');
    const after = drop?.id === id ? drop.after : false;
    setDragId(null);
    setDrop(null);
    const from = order.findIndex((o) => o.id === dragged);
    const target = order.findIndex((o) => o.id === id);
    if (from < 0 || target < 0 || dragged === id) return;
    let to = target + (after ? 1 : 0);
    if (from < to) to -= 1;
    move(from, to);
  };

  return (
    <>
      <ol className="order-list" aria-label="Organization display order">
        {order.map((org, index) => {
          const nameId = `${baseId}-${org.id}`;
          const dropClass = drop?.id === org.id && dragId !== org.id ? (drop.after ? ' drop-after' : ' drop-before') : '';
          return (
            <li
              key={org.id}
              className={`order-item${dragId === org.id ? ' dragging' : ''}${dropClass}`}
              draggable
              data-testid="org-order-item"
              onDragStart={(e) => {
                setDragId(org.id);
                e.dataTransfer.effectAllowed = 'move';
                e.dataTransfer.setData('text/plain', org.id);
              }}
              onDragEnd={() => { setDragId(null); setDrop(null); }}
              onDragOver={(e) => onDragOver(e, org.id)}
              onDrop={(e) => onDrop(e, org.id)}
            >
              <span className="order-handle" aria-hidden="true">⋮⋮</span>
              <span className="order-pos">{index + 1}.</span>
              <span className="order-name" id={nameId}>
                <Link to={`/organizations/${org.id}`} draggable={false}>{org.name}</Link> <StatusBadge status={org.status} />
              </span>
              <button
                type="button"
                aria-label={`Move up: ${org.name}`}
                aria-describedby={nameId}
                disabled={index === 0}
                ref={(el) => { if (el) buttons.current.set(`${org.id}|up`, el); else buttons.current.delete(`${org.id}|up`); }}
                onClick={() => move(index, index - 1, 'up')}
              >
                Move up
              </button>
              <button
                type="button"
                aria-label={`Move down: ${org.name}`}
                aria-describedby={nameId}
                disabled={index === order.length - 1}
                ref={(el) => { if (el) buttons.current.set(`${org.id}|down`, el); else buttons.current.delete(`${org.id}|down`); }}
                onClick={() => move(index, index + 1, 'down')}
              >
                Move down
              </button>
            </li>
          );
        })}
      </ol>
      <div className="order-status">
        <p role="status">
          <span className="tenancy-sr-only">{announcement} </span>
          {state === 'saving' && <span className="saving">Saving order…</span>}
          {state === 'saved' && <span className="saved">Order saved.</span>}
        </p>
        {state === 'error' && error && (
          <ErrorMessage error={new ApiError(error.status, error.code, `The order was not saved: ${error.message}${/[.!?]$/.test(error.message) ? '' : '.'} The last saved order is shown.`)} />
        )}
      </div>
    </>
  );
}
