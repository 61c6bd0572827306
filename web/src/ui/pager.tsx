// Page controls for the API's `{pagination: {page, limit, total, totalPages}}` envelope.
export interface Pagination { page: number; limit: number; total: number; totalPages: number }

export function Pager({ pagination, onPage, label = 'Pages' }: { pagination: Pagination; onPage: (page: number) => void; label?: string }) {
  const { page, totalPages, total } = pagination;
  return (
    <nav className="pager" aria-label={label}>
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>Previous</button>
      <span aria-live="polite">Page {page} of {Math.max(totalPages, 1)} · {total} in all</span>
      <button type="button" disabled={page >= totalPages} onClick={() => onPage(page + 1)}>Next</button>
    </nav>
  );
}
