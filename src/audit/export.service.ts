// GET /audit-logs/export (API.md §8): the /logs entries of the caller's reach as json, ndjson or
// csv, at most 10,000 rows, streamed. Rows are read in keyset pages of PAGE rows, each in its own
// short transaction, and written as they are read: memory stays flat, and a slow client never
// holds a database connection (or, on PGlite, the only one) while it reads.
//
// Resuming pullers pass orgId and afterSeq and get the sealed rows of that chain in seq order;
// otherwise rows come newest first, like /logs. A row appended while an export runs is either in
// it or not; a row never appears twice, and none that existed when the export started is skipped
// (rows are never changed, only sealed, and the keyset order does not depend on the seal).
import { Readable } from 'node:stream';
import type { Static } from 'typebox';
import type { Database } from '../db/database.js';
import { readTenant, withTenant } from '../db/tenant-scope.js';
import { organizationExists } from '../db/tenant-lookups.js';
import { AppError } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import type { AuditRowWithUser } from './audit.repo.js';
import { chainsFor, parseRange } from './audit.service.js';
import { logEntry } from './entries.js';
import * as repo from './export.repo.js';
import { actorOf, type AuditEvent, type RecordAudit } from './recorder.js';
import type { LogEntry } from './schemas.js';

export const EXPORT_MAX_ROWS = 10_000;
const PAGE = 1000;
const CHUNK = 32 * 1024;

export type ExportFormat = 'json' | 'ndjson' | 'csv';

export interface ExportParams {
  format?: ExportFormat;
  user?: string;
  action?: string;
  resource?: string;
  from?: string;
  to?: string;
  orgId?: string;
  afterSeq?: number;
  limit?: number;
}

export interface ExportResponse {
  contentType: string;
  filename: string;
  body: Readable;
}

type Entry = Static<typeof LogEntry>;

// API.md §8: the CSV columns, in this order; every chain field, so a CSV can be verified too (after
// undoing formulaSafe, below).
export const CSV_COLUMNS = [
  'id', 'orgId', 'seq', 'timestamp', 'actorType', 'actorId', 'actorEmail', 'action', 'resourceType', 'resourceId',
  'resourceName', 'details', 'ipAddress', 'userAgent', 'result', 'errorMessage', 'prevChecksum', 'checksum',
] as const;

const FORMULA_START = /^'*[=+\-@\t\r]/;

/**
 * A spreadsheet runs a cell starting with =, +, -, @, tab or CR as a formula (a user agent of
 * `=HYPERLINK(…)` would become a link), so such a cell gets a leading ' (OWASP's CSV injection
 * advice). A cell whose leading quotes precede one of those gets one more quote, so the step undoes
 * exactly: drop one ' from a cell matching ^'+[=+\-@\t\r] to get the stored value back.
 */
function formulaSafe(text: string): string {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** RFC 4180: quote a field holding a comma, quote, CR or LF, doubling quotes. null is an empty field; "" is quoted, to tell them apart. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = formulaSafe(typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value));
  return text === '' || /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

interface Format {
  contentType: string;
  head: string;
  /** One entry, `first` when nothing came before it. */
  entry(entry: Entry, first: boolean): string;
  tail(count: number, nextAfterSeq: number | null): string;
}

const FORMATS: Record<ExportFormat, Format> = {
  // One entry per line inside the envelope, so the offline verifier can stream a json export too.
  json: {
    contentType: 'application/json; charset=utf-8',
    head: '{"data":[\n',
    entry: (entry, first) => (first ? '' : ',\n') + JSON.stringify(entry),
    tail: (count, nextAfterSeq) => `${count ? '\n' : ''}],"count":${count},"nextAfterSeq":${JSON.stringify(nextAfterSeq)}}\n`,
  },
  ndjson: {
    contentType: 'application/x-ndjson; charset=utf-8',
    head: '',
    entry: (entry) => `${JSON.stringify(entry)}\n`,
    tail: () => '',
  },
  csv: {
    contentType: 'text/csv; charset=utf-8; header=present',
    head: `${CSV_COLUMNS.join(',')}\r\n`,
    entry: (entry) => `${CSV_COLUMNS.map((column) => csvField(entry[column])).join(',')}\r\n`,
    tail: () => '',
  },
};

type Chains = NonNullable<ReturnType<typeof chainsFor>>;

/**
 * The chain that records a data.export. An export of one organization (named by orgId, or the only
 * one the caller reaches) goes to that organization's chain, where its auditors look; orgId=platform
 * to the platform chain. An export spanning several organizations, or one of nothing the caller may
 * read, goes to the caller's own organization, and for partner and system callers (who have none)
 * to the platform chain: one entry per export, never one per organization touched.
 */
function auditChainOf(caller: Caller, chains: Chains | null): string | null {
  if (chains?.platformOnly) return null;
  if (chains?.orgIds?.length === 1) return chains.orgIds[0]!;
  return caller.orgId;
}

/** The filters as the export's audit entry records them: what was asked, with the limit applied. */
function filtersOf(params: ExportParams, limit: number): Record<string, unknown> {
  const filters: Record<string, unknown> = {};
  for (const key of ['orgId', 'user', 'action', 'resource', 'from', 'to', 'afterSeq'] as const) {
    if (params[key] !== undefined) filters[key] = params[key];
  }
  filters.limit = limit;
  return filters;
}

export function createAuditExportService(deps: { db: Database; recordAudit: RecordAudit; now: () => number }) {
  const { db } = deps;

  return {
    /**
     * Validates, reads the first page (so a failure there is still an ordinary error response) and
     * returns the body as a stream that reads the rest while the client consumes it.
     */
    async open(caller: Caller, meta: RequestMeta, params: ExportParams): Promise<ExportResponse> {
      const formatName = params.format ?? 'json';
      const format = FORMATS[formatName];
      const limit = Math.min(Math.max(params.limit ?? EXPORT_MAX_ROWS, 1), EXPORT_MAX_ROWS);
      if (params.afterSeq !== undefined && !params.orgId) {
        throw new AppError('VALIDATION_FAILED', 'afterSeq needs orgId: name the organization (or "platform") whose chain to resume', {
          errors: [{ path: 'query.orgId', message: 'is required with afterSeq' }],
        });
      }
      const chains = chainsFor(caller, params.orgId);
      const filter: repo.ExportFilter = { orgIds: chains ? chains.orgIds : [], platformOnly: chains?.platformOnly ?? false, ...parseRange(params) };
      if (params.user) filter.user = params.user;
      if (params.action) filter.action = params.action;
      if (params.resource) filter.resource = params.resource;

      const chainMode = params.afterSeq !== undefined;
      const fetchPage = (cursor: repo.ExportCursor, size: number): Promise<AuditRowWithUser[]> =>
        chains ? withTenant(db, caller.tenant, (tx) => repo.exportPage(tx, filter, cursor, size)) : Promise.resolve([]);
      const after = (rows: AuditRowWithUser[]): repo.ExportCursor => {
        const last = rows[rows.length - 1]!;
        return chainMode
          ? { mode: 'chain', chainId: repo.chainIdOf(params.orgId!), afterSeq: last.seq! }
          : { mode: 'newest', before: { timestamp: last.timestamp, id: last.id } };
      };
      const start: repo.ExportCursor = chainMode
        ? { mode: 'chain', chainId: repo.chainIdOf(params.orgId!), afterSeq: params.afterSeq! }
        : { mode: 'newest', before: null };
      const firstSize = Math.min(PAGE, limit);
      const firstPage = await fetchPage(start, firstSize);
      // A system caller may name an organization that never existed (its export is empty): the
      // entry then goes to the platform chain, as an export of nothing in particular does. (An
      // organization with rows exists: only an empty first page needs the look.)
      let auditOrg = auditChainOf(caller, chains);
      if (caller.scope === 'system' && auditOrg !== null && firstPage.length === 0 && !(await readTenant(db, caller.tenant, (tx) => organizationExists(tx, auditOrg!)))) {
        auditOrg = null;
      }

      const record = (count: number, completed: boolean) => {
        const event: AuditEvent = {
          orgId: auditOrg,
          actor: actorOf(caller),
          action: 'data.export',
          resource: { type: 'audit_log' },
          details: { format: formatName, filters: filtersOf(params, limit), count, ...(completed ? {} : { completed: false }) },
          ip: meta.ip,
          userAgent: meta.userAgent,
        };
        return withTenant(db, caller.tenant, (tx) => deps.recordAudit(tx, event));
      };

      async function* body(): AsyncGenerator<string> {
        let count = 0;
        let recorded = false;
        // Chain mode: the last seq returned. Newest first: the highest sealed seq, when one chain is exported.
        let nextAfterSeq: number | null = chainMode ? params.afterSeq! : null;
        try {
          yield format.head;
          let rows = firstPage;
          let requested = firstSize;
          while (rows.length > 0) {
            const remaining = limit - count - rows.length;
            // Read the next page while this one is serialised and sent.
            const size = Math.min(PAGE, remaining);
            const next = rows.length === requested && size > 0 ? fetchPage(after(rows), size) : null;
            next?.catch(() => {}); // handled when awaited; silences it if the client goes away first
            // Written in chunks of about CHUNK characters: small strings stay in V8's young
            // generation, where they die cheaply, instead of piling up as large objects.
            let chunk = '';
            for (const row of rows) {
              chunk += format.entry(logEntry(row), count === 0);
              count++;
              if (row.seq !== null && (chainMode || (params.orgId && row.seq > (nextAfterSeq ?? 0)))) nextAfterSeq = row.seq;
              if (chunk.length >= CHUNK) {
                yield chunk;
                chunk = '';
              }
            }
            if (chunk) yield chunk;
            requested = size;
            rows = next ? await next : [];
          }
          // Committed before the response ends: the entry is readable once the export is received.
          await record(count, true);
          recorded = true;
          yield format.tail(count, nextAfterSeq);
        } finally {
          // The client went away or a page failed: what left is recorded all the same.
          if (!recorded) await record(count, false);
        }
      }

      const stamp = new Date(deps.now()).toISOString().replace(/[:.]/g, '-');
      return {
        contentType: format.contentType,
        filename: `audit-export-${stamp}.${formatName}`,
        body: Readable.from(body(), { objectMode: false, highWaterMark: 64 * 1024 }),
      };
    },
  };
}

export type AuditExportService = ReturnType<typeof createAuditExportService>;
