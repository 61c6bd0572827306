// A list's page and filters live in the address, so a reload, the back button or a shared link shows
// the same list; and every list envelope the API returns is read one way for the pager.
import { useSearchParams } from 'react-router';

/** Rows per page of every list: the API's own default, so a list that names no size reads the same. */
export const PAGE_SIZE = 50;

/** The page sizes a list offers (kept in the address as `limit`; 100 is the API's largest page). */
export const PAGE_SIZES = [25, 50, 100] as const;

/** The page size an address's `limit` asks for: one of PAGE_SIZES, else the default. */
export function pageSizeOf(limit: string): number {
  return (PAGE_SIZES as readonly number[]).includes(Number(limit)) ? Number(limit) : PAGE_SIZE;
}

/**
 * The `pagination` of the API's list envelope. Totals are null under skipCount; a live query's
 * envelope has no totalPages but says whether the device holds more (`hasMore`).
 */
export interface Pagination { page: number; limit: number; total: number | null; totalPages?: number | null; hasMore?: boolean }
export interface ListPage { data: readonly unknown[]; pagination: Pagination }

/** What the pager shows: the counts when the API gives them, and whether there is a next page. */
export interface PageInfo { page: number; total: number | null; pages: number | null; hasMore: boolean }

/**
 * Without totals, a next page exists when the source says so, else when this page came back full:
 * the one fallback, so no list strands its reader on a page with a disabled Next.
 */
export function pageInfo({ data, pagination }: ListPage): PageInfo {
  const { page, limit, total, totalPages, hasMore } = pagination;
  const pages = total === null ? null : Math.max(1, totalPages ?? Math.ceil(total / limit));
  return { page, total, pages, hasMore: hasMore ?? (pages === null ? data.length >= limit : page < pages) };
}

export interface ListQuery<K extends string> {
  page: number;
  /** Each filter's value in the address; '' when absent. */
  filters: Record<K, string>;
  /** Changes exactly when the page or a filter does: the dependency of the list's load. */
  key: string;
  setPage(page: number): void;
  /** Changes some filters ('' removes one) and goes back to the first page. */
  setFilters(patch: Partial<Record<K, string>>): void;
}

/**
 * The page and `keys` of the address's query. `pageParam` names the page of a second list on one
 * screen (an organization's sites), so each list keeps its own. Page 1 and empty filters are left out
 * of the address, so links stay short.
 */
export function useListQuery<K extends string>(keys: readonly K[], pageParam = 'page'): ListQuery<K> {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number.parseInt(params.get(pageParam) ?? '', 10) || 1);
  const filters = Object.fromEntries(keys.map((k) => [k, params.get(k) ?? ''])) as Record<K, string>;
  const write = (patch: Record<string, string | undefined>) =>
    setParams((previous) => {
      const next = new URLSearchParams(previous);
      for (const [name, value] of Object.entries(patch)) {
        if (value) next.set(name, value);
        else next.delete(name);
      }
      return next;
    });
  return {
    page,
    filters,
    key: [page, ...keys.map((k) => filters[k])].join('\u0000'),
    setPage: (next) => write({ [pageParam]: next > 1 ? String(next) : '' }),
    setFilters: (patch) => write({ ...patch, [pageParam]: '' }),
  };
}
