// The audit hash chain (API.md §8), pure: the canonical payload of a row is the RFC 8785 (JCS)
// serialisation of its chain fields, its checksum the lowercase hex SHA-256 of that text, and each
// row names the checksum of the row before it. Anyone holding the rows can recompute all of it.
import { createHash, hash } from 'node:crypto';
import canonicalize from 'canonicalize';

export const CANONICAL_VERSION = 1;

/** The fields a checksum covers, as /logs returns them. */
export interface ChainFields {
  orgId: string | null;
  seq: number;
  timestamp: string;
  actorType: string;
  actorId: string | null;
  actorEmail: string | null;
  action: string;
  resourceType: string | null;
  resourceId: string | null;
  resourceName: string | null;
  details: Record<string, unknown>;
  ipAddress: string | null;
  userAgent: string | null;
  result: string;
  errorMessage: string | null;
  prevChecksum: string | null;
}

// The payload's top-level keys are written in RFC 8785 order (UTF-16 code units; a test checks
// it). Top-level values are strings, numbers or null, whose JCS form is exactly JSON.stringify's;
// only `details` needs the general canonicaliser. One straight concatenation: /verify and the
// sealer run this for every row of a chain.

// Text JSON.stringify writes unchanged between quotes: no quote, backslash, control character or
// surrogate (those few go through JSON.stringify). Calling it for every field was half the cost of
// a checksum.
const PLAIN_TEXT = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

function text(value: string | null): string {
  return value === null ? 'null' : PLAIN_TEXT.test(value) ? `"${value}"` : JSON.stringify(value);
}

const MAX_FAST_DEPTH = 32;

/**
 * RFC 8785 form of plain JSON (what jsonb reads back as): null, booleans, finite numbers, plain
 * text, arrays, plain objects with plain keys, sorted by UTF-16 code units. Anything else
 * (escapes, lone surrogates, undefined, class instances, deep nesting) returns undefined, and the
 * caller hands the whole value to the general canonicaliser, which this matches exactly elsewhere.
 */
function fastCanonical(value: unknown, depth: number): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return PLAIN_TEXT.test(value) ? `"${value}"` : undefined;
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (depth > MAX_FAST_DEPTH) return undefined;
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          const item = fastCanonical(value[i], depth + 1);
          if (item === undefined) return undefined;
          out += i === 0 ? item : `,${item}`;
        }
        return `${out}]`;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return undefined;
      const keys = Object.keys(value).sort();
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const item = fastCanonical((value as Record<string, unknown>)[key], depth + 1);
        if (item === undefined || !PLAIN_TEXT.test(key)) return undefined;
        out += `${i === 0 ? '' : ','}"${key}":${item}`;
      }
      return `${out}}`;
    }
    default:
      return undefined;
  }
}

/** The RFC 8785 form of a JSON value (a row's `details`). */
export function canonicalJson(value: unknown): string | undefined {
  return fastCanonical(value, 0) ?? canonicalize(value);
}

export function canonicalPayload(row: ChainFields): string {
  const details = canonicalJson(row.details);
  if (details === undefined || !Number.isSafeInteger(row.seq)) throw new Error('audit row cannot be canonicalised');
  return `{"action":${text(row.action)},"actorEmail":${text(row.actorEmail)},"actorId":${text(row.actorId)},"actorType":${text(row.actorType)},`
    + `"details":${details},"errorMessage":${text(row.errorMessage)},"ipAddress":${text(row.ipAddress)},"orgId":${text(row.orgId)},`
    + `"prevChecksum":${text(row.prevChecksum)},"resourceId":${text(row.resourceId)},"resourceName":${text(row.resourceName)},`
    + `"resourceType":${text(row.resourceType)},"result":${text(row.result)},"seq":${row.seq},"timestamp":${text(row.timestamp)},`
    + `"userAgent":${text(row.userAgent)},"v":${CANONICAL_VERSION}}`;
}

// The one-shot hash where Node has it (20.12+) costs half of createHash on rows this small.
const sha256Hex = typeof hash === 'function'
  ? (text: string) => hash('sha256', text, 'hex')
  : (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

export function checksumOf(row: ChainFields): string {
  return sha256Hex(canonicalPayload(row));
}

export interface ChainHead {
  seq: number;
  checksum: string | null;
}

/** Places pending rows after the head, in order: their seq, prevChecksum and checksum. */
export function sealRows(head: ChainHead, rows: Omit<ChainFields, 'seq' | 'prevChecksum'>[]): { seq: number; prevChecksum: string | null; checksum: string }[] {
  let seq = head.seq;
  let prevChecksum = head.checksum;
  return rows.map((row) => {
    seq += 1;
    const checksum = checksumOf({ ...row, seq, prevChecksum });
    const sealed = { seq, prevChecksum, checksum };
    prevChecksum = checksum;
    return sealed;
  });
}

export type BreakReason = 'checksum_mismatch' | 'prev_checksum_mismatch' | 'seq_gap';

/**
 * Checks one sealed row against the row before it (or the chain's anchor, or nothing for seq 1).
 * Returns why the chain breaks at this row, or null when it holds.
 */
export function checkLink(previous: ChainHead | null, row: ChainFields & { checksum: string }): BreakReason | null {
  const expectedSeq = previous ? previous.seq + 1 : 1;
  if (previous && row.seq !== expectedSeq) return 'seq_gap';
  if (!previous && row.seq !== 1) return 'seq_gap';
  if (row.prevChecksum !== (previous ? previous.checksum : null)) return 'prev_checksum_mismatch';
  if (checksumOf(row) !== row.checksum) return 'checksum_mismatch';
  return null;
}
