// The links of one chain, checked in whatever order its rows arrive. An export comes in seq order
// (afterSeq pulls) or newest first, where rows sharing a millisecond are in id order, not seq
// order; sorting a whole chain would hold it in memory. Instead each row waits in `open` only until
// both its neighbours (seq - 1 and seq + 1) have arrived and the two links are checked, so memory
// follows the disorder of the file, not its length. Whatever is still open at the end marks the
// chain's ends and its gaps.

export type BreakReason =
  | 'checksum_mismatch'
  | 'prev_checksum_mismatch'
  | 'seq_gap'
  | 'duplicate_seq'
  | 'checkpoint_signature_invalid'
  | 'checkpoint_mismatch';

export interface Break {
  seq: number;
  reason: BreakReason;
  detail: string;
  /** The row's id, when a row of the export is at fault. */
  id: string | null;
}

// At one seq, the reason /verify would name first (it checks seq, then prevChecksum, then checksum).
const PRIORITY: Record<BreakReason, number> = {
  seq_gap: 0,
  duplicate_seq: 1,
  prev_checksum_mismatch: 2,
  checksum_mismatch: 3,
  checkpoint_mismatch: 4,
  checkpoint_signature_invalid: 5,
};

interface OpenRow {
  seq: number;
  id: string;
  checksum: string;
  prevChecksum: string | null;
  /** The link to seq - 1 has been checked. */
  left: boolean;
  /** The link to seq + 1 has been checked. */
  right: boolean;
}

export interface SealedRow {
  seq: number;
  id: string;
  checksum: string;
  prevChecksum: string | null;
}

const SEEN_BLOCK = 1 << 15; // seqs per block of the seen-bitmap (4 KiB)

export class ChainLinks {
  rows = 0;
  minSeq = Infinity;
  maxSeq = -Infinity;
  private readonly open = new Map<number, OpenRow>();
  /** Which seqs arrived, one bit each, to tell a repeated seq from a gap. */
  private readonly seen = new Map<number, Uint8Array>();
  private first: Break | null = null;
  breaks = 0;

  /** The lowest-seq break found so far (the one the chain is reported broken at). */
  get firstBreak(): Break | null {
    return this.first;
  }

  report(brk: Break): void {
    this.breaks++;
    const f = this.first;
    if (!f || brk.seq < f.seq || (brk.seq === f.seq && PRIORITY[brk.reason] < PRIORITY[f.reason])) this.first = brk;
  }

  private markSeen(seq: number): boolean {
    const block = Math.floor(seq / SEEN_BLOCK);
    let bits = this.seen.get(block);
    if (!bits) this.seen.set(block, (bits = new Uint8Array(SEEN_BLOCK / 8)));
    const offset = seq % SEEN_BLOCK;
    const mask = 1 << (offset & 7);
    const before = (bits[offset >> 3]! & mask) !== 0;
    bits[offset >> 3]! |= mask;
    return before;
  }

  /** A sealed row whose own checksum has been checked already. */
  add(row: SealedRow): void {
    if (this.markSeen(row.seq)) {
      this.report({ seq: row.seq, reason: 'duplicate_seq', detail: `seq ${row.seq} appears more than once`, id: row.id });
      return;
    }
    this.rows++;
    if (row.seq < this.minSeq) this.minSeq = row.seq;
    if (row.seq > this.maxSeq) this.maxSeq = row.seq;
    const current: OpenRow = { seq: row.seq, id: row.id, checksum: row.checksum, prevChecksum: row.prevChecksum, left: false, right: false };
    const below = this.open.get(row.seq - 1);
    if (below) {
      this.link(below, current);
      if (below.left) this.open.delete(below.seq);
    }
    const above = this.open.get(row.seq + 1);
    if (above) {
      this.link(current, above);
      if (above.right) this.open.delete(above.seq);
    }
    if (!(current.left && current.right)) this.open.set(row.seq, current);
  }

  private link(lower: OpenRow, upper: OpenRow): void {
    lower.right = true;
    upper.left = true;
    if (upper.prevChecksum !== lower.checksum) {
      this.report({
        seq: upper.seq,
        reason: 'prev_checksum_mismatch',
        detail: `prevChecksum of seq ${upper.seq} is not the checksum of seq ${lower.seq}`,
        id: upper.id,
      });
    }
  }

  /** Ends and gaps: rows still open lack a neighbour. Returns the seq the chain starts at (null: no rows). */
  finish(): number | null {
    if (this.rows === 0) return null;
    const ends = [...this.open.values()].sort((a, b) => a.seq - b.seq);
    let previous: OpenRow | null = null;
    for (const row of ends) {
      if (!row.left) {
        if (row.seq === this.minSeq) {
          // The first row: seq 1 has no predecessor; a later start follows an anchor (retention) or
          // a partial export, whose predecessor is not in the file and cannot be checked.
          if (row.seq === 1 && row.prevChecksum !== null) {
            this.report({ seq: 1, reason: 'prev_checksum_mismatch', detail: 'the first row of a chain has no prevChecksum', id: row.id });
          }
        } else {
          const after = previous && !previous.right ? previous.seq : null;
          const missing = after === null ? `before seq ${row.seq}` : after + 1 === row.seq - 1 ? `seq ${after + 1}` : `seqs ${after + 1}..${row.seq - 1}`;
          this.report({ seq: row.seq, reason: 'seq_gap', detail: `${missing} missing`, id: row.id });
        }
      }
      previous = row;
    }
    this.open.clear();
    return this.minSeq;
  }
}
