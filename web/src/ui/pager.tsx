// Page controls under every list: Previous, where the reader is, Next (list-query.ts reads the envelope),
// and the controls above a list that live in the address with its page: a search box and the page size.
import { useEffect, useRef, useState } from 'react';
import { Field } from './forms';
import { PAGE_SIZE, PAGE_SIZES, pageInfo, type ListPage } from './list-query';

export function Pager({ list, onPage, label }: { list: ListPage; onPage: (page: number) => void; label: string }) {
  const { page, total, pages, hasMore } = pageInfo(list);
  const nav = useRef<HTMLElement>(null);
  // Another page starts at the top of its list, not where the reader left the last one.
  const go = (next: number) => {
    onPage(next);
    const list = nav.current?.parentElement?.querySelector('table') ?? null;
    if (list && list.getBoundingClientRect().top < 0) list.scrollIntoView({ block: 'start' });
    else if (!list) window.scrollTo({ top: 0 });
  };
  return (
    <nav className="pager" aria-label={label} ref={nav}>
      <button type="button" disabled={page <= 1} onClick={() => go(page - 1)}>Previous</button>
      <span aria-live="polite">Page {page}{total !== null && pages !== null ? ` of ${pages} · ${total.toLocaleString()} in all` : ''}</span>
      <button type="button" disabled={!hasMore} onClick={() => go(page + 1)}>Next</button>
    </nav>
  );
}

const SEARCH_DELAY_MS = 300;

/**
 * A search box whose value lives in the address (`value` comes from it, `onSearch` writes it): typing
 * settles for a moment before it is sent, Enter sends at once, and an emptied box leaves the address.
 */
export function SearchField({ label, value, onSearch, placeholder }: { label: string; value: string; onSearch: (value: string) => void; placeholder?: string }) {
  const [draft, setDraft] = useState(value);
  const sent = useRef(value);
  // Back, forward or a link changes the address: the box follows it (but not the box's own search
  // coming back, which would undo what was typed meanwhile).
  useEffect(() => {
    if (value === sent.current) return;
    sent.current = value;
    setDraft(value);
  }, [value]);
  useEffect(() => {
    const next = draft.trim();
    if (next === sent.current) return;
    const timer = setTimeout(() => {
      sent.current = next;
      onSearch(next);
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [draft, onSearch]);
  return (
    <Field label={label}>
      <input
        type="search"
        value={draft}
        placeholder={placeholder}
        maxLength={255}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key !== 'Enter') return;
          e.preventDefault();
          const next = draft.trim();
          if (next !== sent.current) {
            sent.current = next;
            onSearch(next);
          }
        }}
      />
    </Field>
  );
}

/** The page size, kept in the address as `limit` once chosen (without it, the default size). */
export function PageSizeSelect({ value, onChange }: { value: string; onChange: (limit: string) => void }) {
  const known = (PAGE_SIZES as readonly number[]).includes(Number(value));
  return (
    <Field label="Per page">
      <select value={known ? value : String(PAGE_SIZE)} onChange={(e) => onChange(e.target.value)}>
        {PAGE_SIZES.map((n) => <option key={n} value={String(n)}>{n}</option>)}
      </select>
    </Field>
  );
}
