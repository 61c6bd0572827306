// A list page and its total in one statement, so a counted list costs one round trip, not two
// (API.md §4; skipCount drops the count altogether).
import type { Queryable, QueryOptions } from './database.js';

export interface PageQuery {
  /** The page: a select with its order, limit and offset. */
  rows: string;
  /** `select count(*) …` over the same filter, or null (skipCount): no total. */
  count: string | null;
  /** Shared by both statements. */
  params: unknown[];
  options?: QueryOptions;
}

/**
 * Runs the count and the page as one statement: the count's one row joined to the page's rows, so
 * an empty page still brings its total back. The join has no condition, so PostgreSQL can only
 * run it as a nested loop with the count outside: the page's rows come out in the page's own
 * order. (Numbering the rows and sorting by the number, the form before, cost PostgreSQL a tenth
 * more CPU on the device list.) The helper column is removed from the rows returned.
 */
export async function queryPage<R extends object>(tx: Queryable, query: PageQuery): Promise<{ rows: R[]; total: number | null }> {
  if (query.count === null) {
    const { rows } = await tx.query<R>(query.rows, query.params, query.options);
    return { rows, total: null };
  }
  const { rows } = await tx.query<R & { page_total: number; page_row: true | null }>(
    `select c.page_total, p.* from (${query.count}) c(page_total) left join lateral (select true as page_row, q.* from (${query.rows}) q) p on true`,
    query.params,
    query.options,
  );
  const total = Number(rows[0]?.page_total ?? 0);
  const page: R[] = [];
  for (const row of rows) {
    if (row.page_row === null) continue; // the empty page's one row
    const { page_total: _total, page_row: _row, ...rest } = row;
    page.push(rest as unknown as R);
  }
  return { rows: page, total };
}
