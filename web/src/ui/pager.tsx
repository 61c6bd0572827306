// Page controls under every list: Previous, where the reader is, Next (list-query.ts reads the envelope).
import { pageInfo, type ListPage } from './list-query';

export function Pager({ list, onPage, label }: { list: ListPage; onPage: (page: number) => void; label: string }) {
  const { page, total, pages, hasMore } = pageInfo(list);
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>Previous</button>
      <span aria-live="polite">Page {page}{total !== null && pages !== null ? ` of ${pages} · ${total.toLocaleString()} in all` : ''}</span>
      <button type="button" disabled={!hasMore} onClick={() => onPage(page + 1)}>Next</button>
    </nav>
  );
}
