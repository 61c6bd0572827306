// The per-row work of verification, the same on the main thread and in worker threads: parse an
// export line, check it carries every canonical field (API.md §8), and recompute its checksum from
// the canonical payload of the pure hash-chain module. What comes out is small: what the chain
// links and the checkpoints need, not the row.
import { checksumOf, type ChainFields } from '../audit/hash-chain.js';

export type LineFormat = 'ndjson' | 'json';

/** A row as the link checks see it; seq null for a pending row (not in the chain yet). */
export interface CheckedRow {
  line: number;
  orgId: string | null;
  id: string;
  seq: number | null;
  checksum: string | null;
  prevChecksum: string | null;
  /** The stored checksum is the SHA-256 of the row's canonical payload. */
  checksumOk: boolean;
}

export type Checked =
  | CheckedRow
  | { line: number; error: string }
  /** The closing line of a json export, `],"count":N,…}`. */
  | { line: number; tail: string };

const NULLABLE_TEXT = ['orgId', 'actorId', 'actorEmail', 'resourceType', 'resourceId', 'resourceName', 'ipAddress', 'userAgent', 'errorMessage', 'prevChecksum', 'checksum'] as const;
const TEXT = ['id', 'timestamp', 'actorType', 'action', 'result'] as const;

/** null when the value carries every field the canonical payload needs, with the right types. */
function entryProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'an entry is a JSON object';
  const e = value as Record<string, unknown>;
  for (const key of TEXT) if (typeof e[key] !== 'string') return `${key} must be a string`;
  for (const key of NULLABLE_TEXT) if (e[key] !== null && typeof e[key] !== 'string') return `${key} must be a string or null`;
  if (typeof e.details !== 'object' || e.details === null || Array.isArray(e.details)) return 'details must be an object';
  if (e.seq === null) return e.checksum === null ? null : 'a pending row (seq null) has no checksum';
  if (!Number.isSafeInteger(e.seq) || (e.seq as number) < 1) return 'seq must be a positive integer or null';
  return e.checksum === null ? 'a sealed row (with a seq) has a checksum' : null;
}

export function checkEntry(line: number, value: unknown): Checked {
  const problem = entryProblem(value);
  if (problem) return { line, error: problem };
  // The entry carries the canonical fields at top level (plus others the payload ignores).
  const e = value as ChainFields & { id: string; seq: number | null; checksum: string | null };
  let checksumOk = true;
  if (e.seq !== null) {
    try {
      checksumOk = checksumOf(e) === e.checksum;
    } catch (err) {
      // JCS refuses some JSON (a lone surrogate in a string): no service could have hashed this row.
      return { line, error: `no canonical form: ${(err as Error).message}` };
    }
  }
  return { line, orgId: e.orgId, id: e.id, seq: e.seq, checksum: e.checksum, prevChecksum: e.prevChecksum, checksumOk };
}

const JSON_HEAD = '{"data":[';

/**
 * Checks every line of `bytes` (whole lines of UTF-8), numbering them from `firstLine`; appends to
 * `out`. In a json export the head line is skipped, the entries' trailing commas dropped and the
 * closing line handed back as a tail. Returns how many lines there were.
 */
export function checkLines(format: LineFormat, bytes: Buffer, firstLine: number, out: Checked[]): number {
  let lineNo = firstLine - 1;
  for (let start = 0; start < bytes.length;) {
    const newline = bytes.indexOf(10, start);
    const end = newline < 0 ? bytes.length : newline;
    lineNo++;
    // Decoded line by line: an ASCII line stays a one-byte string (faster to parse and hash) even
    // when another line of the chunk is not.
    let line = bytes.toString('utf8', start, end > start && bytes[end - 1] === 13 ? end - 1 : end);
    start = end + 1;
    if (line.trim() === '') continue;
    if (format === 'json') {
      line = line.trim();
      if (line === JSON_HEAD) continue;
      if (line.startsWith(']')) {
        out.push({ line: lineNo, tail: line });
        continue;
      }
      if (line.endsWith(',')) line = line.slice(0, -1);
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      out.push({ line: lineNo, error: 'not valid JSON' });
      continue;
    }
    out.push(checkEntry(lineNo, value));
  }
  return lineNo - firstLine + 1;
}
