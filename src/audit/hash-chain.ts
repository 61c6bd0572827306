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
// only `details` needs the general canonicaliser. One straight concatenation: /verify runs this
// for every row of a chain.
const text = JSON.stringify;

export function canonicalPayload(row: ChainFields): string {
  const details = canonicalize(row.details);
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
