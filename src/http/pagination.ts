// Page arithmetic and the list envelope of API.md §4: page below 1 becomes 1, limit is clamped
// into 1..max, a non-integer is a validation error (the schema's job), and skipCount drops totals.
import { Type, type TSchema } from 'typebox';
import { Nullable } from './common-schemas.js';

/**
 * A page number or page size as a query parameter: any safe integer, clamped by pageOf. Beyond
 * ±(2^53 - 1) a number is no longer exact ("9007199254740993" reads as ...992), so it is 400.
 */
export const ClampedInteger = (description: string) =>
  Type.Integer({ minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description });

export const PaginationQuery = {
  page: Type.Optional(ClampedInteger('Page number, from 1; smaller values count as 1')),
  limit: Type.Optional(ClampedInteger('Page size; clamped into 1..the list maximum')),
  skipCount: Type.Optional(Type.Boolean({ description: 'true: the total is not counted; total and totalPages are null (cheaper)' })),
};

export const PaginationSchema = Type.Object({
  page: Type.Integer(),
  limit: Type.Integer(),
  total: Nullable(Type.Integer()),
  totalPages: Nullable(Type.Integer()),
});

export const Paginated = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), pagination: PaginationSchema });

export interface Page {
  page: number;
  limit: number;
  offset: number;
  /** false with skipCount=true (API.md §4): the list's total is neither counted nor sent. */
  withTotal: boolean;
}

const MAX_PAGE = 1_000_000_000; // keeps OFFSET inside bigint whatever the client sends

export function pageOf(query: { page?: number; limit?: number; skipCount?: boolean }, maxLimit = 100, defaultLimit = 50): Page {
  const page = Math.min(Math.max(query.page ?? 1, 1), MAX_PAGE);
  const limit = Math.min(Math.max(query.limit ?? defaultLimit, 1), maxLimit);
  return { page, limit, offset: (page - 1) * limit, withTotal: query.skipCount !== true };
}

export interface PaginatedResult<T> {
  data: T[];
  pagination: { page: number; limit: number; total: number | null; totalPages: number | null };
}

/** The list envelope; with skipCount=true the totals are null whatever `total` says. */
export function paginated<T>(data: T[], page: Page, total: number | null): PaginatedResult<T> {
  if (!page.withTotal) total = null;
  return {
    data,
    pagination: {
      page: page.page,
      limit: page.limit,
      total,
      totalPages: total === null ? null : Math.ceil(total / page.limit),
    },
  };
}
