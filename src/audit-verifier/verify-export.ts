// Verifies an audit export with nothing but the file (and, optionally, signed checkpoints and the
// public key): every row's checksum is recomputed from its canonical payload (API.md §8, through the
// pure hash-chain module), every prevChecksum link and seq step is checked per chain, and each
// checkpoint's signature and checksum. Streams the file; per chain it keeps only the rows whose
// neighbours have not arrived yet (chain-links.ts). Parsing and hashing, the bulk of the work, run
// on this thread and on worker threads (worker-pool.ts); the link checks here, in file order.
import { stat } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';
import { ChainLinks, type Break } from './chain-links.js';
import { checkpointSignatureProblem, loadCheckpoints, loadPublicKey, type Checkpoint, type PublicKey } from './checkpoints.js';
import { openExport, UsageError, type ExportFormat } from './export-reader.js';
import { checkEntry, checkLines, type Checked, type CheckedRow } from './row-check.js';
import { defaultThreads, workerPool, type ChunkResult } from './worker-pool.js';

export interface ChainReport {
  /** The organization; null for the platform chain. */
  orgId: string | null;
  valid: boolean;
  /** Sealed rows checked. */
  rows: number;
  /** Rows not sealed yet (seq null): not part of the chain, skipped. */
  pending: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** firstSeq > 1: the chain starts after an anchor (or the export starts mid-chain); that row's prevChecksum cannot be checked. */
  startsMidChain: boolean;
  checkpoints: { matched: number; outsideExport: number; invalid: number };
  brokenAt: Break | null;
  /** Breaks found in all (brokenAt is the lowest seq). */
  breaks: number;
}

export interface FileProblem {
  line: number;
  reason: 'malformed_entry';
  detail: string;
}

export interface VerifyReport {
  valid: boolean;
  format: ExportFormat;
  entries: number;
  chains: ChainReport[];
  /** Malformed entries and envelope problems, in line order (the first 1000). */
  problems: FileProblem[];
  problemCount: number;
}

interface ChainState {
  orgId: string | null;
  links: ChainLinks;
  pending: number;
  /** Checkpoints with a good signature not yet met in the export: seq -> checksum. */
  expected: Map<number, string>;
  matched: number;
  invalid: number;
}

const MAX_PROBLEMS = 1000;

export class ExportVerifier {
  private readonly chains = new Map<string, ChainState>();
  private readonly problems: FileProblem[] = [];
  private problemCount = 0;
  private entries = 0;
  /** For a json export in the service's layout: whether its closing line has come. */
  private envelope: 'none' | 'open' | 'closed';

  constructor(options: { checkpoints?: Checkpoint[]; publicKey?: PublicKey; envelope?: boolean } = {}) {
    const { checkpoints, publicKey } = options;
    this.envelope = options.envelope ? 'open' : 'none';
    if (!checkpoints || !publicKey) return;
    for (const checkpoint of checkpoints) {
      const chain = this.chain(checkpoint.orgId);
      const problem = checkpointSignatureProblem(checkpoint, publicKey);
      if (problem) {
        chain.invalid++;
        chain.links.report({ seq: checkpoint.seq, reason: 'checkpoint_signature_invalid', detail: `checkpoint at seq ${checkpoint.seq}: ${problem}`, id: null });
      } else {
        chain.expected.set(checkpoint.seq, checkpoint.checksum);
      }
    }
  }

  private chain(orgId: string | null): ChainState {
    const key = orgId ?? 'platform';
    let chain = this.chains.get(key);
    if (!chain) this.chains.set(key, (chain = { orgId, links: new ChainLinks(), pending: 0, expected: new Map(), matched: 0, invalid: 0 }));
    return chain;
  }

  /** One checked line, in file order. */
  add(item: Checked): void {
    if ('tail' in item) {
      this.closeEnvelope(item.line, item.tail);
      return;
    }
    if (this.envelope === 'closed') {
      this.problem(item.line, 'an entry after the json envelope closed');
      return;
    }
    this.entries++;
    if ('error' in item) this.problem(item.line, item.error);
    else this.addRow(item);
  }

  problem(line: number, detail: string): void {
    // Kept up to a bound (a file that is not an export at all has a problem on every line); all are counted.
    if (++this.problemCount <= MAX_PROBLEMS) this.problems.push({ line, reason: 'malformed_entry', detail });
  }

  private closeEnvelope(line: number, tail: string): void {
    if (this.envelope !== 'open') {
      this.problem(line, 'a json envelope end where none was open');
      return;
    }
    this.envelope = 'closed';
    // The envelope's count tells a truncated or padded file from a whole one.
    try {
      const { count } = JSON.parse(`{"data":[${tail}`) as { count?: unknown };
      if (count !== this.entries) this.problem(line, `the envelope says count ${String(count)}, the file holds ${this.entries} entries`);
    } catch {
      this.problem(line, 'the json envelope does not close properly');
    }
  }

  private addRow(row: CheckedRow): void {
    const chain = this.chain(row.orgId);
    if (row.seq === null) {
      chain.pending++;
      return;
    }
    const { seq, id } = row;
    const checksum = row.checksum!;
    if (!row.checksumOk) {
      chain.links.report({ seq, reason: 'checksum_mismatch', detail: `seq ${seq}: the checksum is not the SHA-256 of the row's canonical payload`, id });
    }
    const signed = chain.expected.get(seq);
    if (signed !== undefined) {
      chain.expected.delete(seq);
      if (signed === checksum) chain.matched++;
      else chain.links.report({ seq, reason: 'checkpoint_mismatch', detail: `seq ${seq}: the signed checkpoint names checksum ${signed}`, id });
    }
    chain.links.add({ seq, id, checksum, prevChecksum: row.prevChecksum });
  }

  finish(format: ExportFormat, lastLine: number): VerifyReport {
    if (this.envelope === 'open') this.problem(lastLine, 'the json export ends before its envelope closes (truncated file)');
    const chains: ChainReport[] = [];
    for (const chain of this.chains.values()) {
      const firstSeq = chain.links.finish();
      const brokenAt = chain.links.firstBreak;
      chains.push({
        orgId: chain.orgId,
        valid: brokenAt === null,
        rows: chain.links.rows,
        pending: chain.pending,
        firstSeq,
        lastSeq: firstSeq === null ? null : chain.links.maxSeq,
        startsMidChain: firstSeq !== null && firstSeq > 1,
        checkpoints: { matched: chain.matched, outsideExport: chain.expected.size, invalid: chain.invalid },
        brokenAt,
        breaks: chain.links.breaks,
      });
    }
    chains.sort((a, b) => (a.orgId ?? '').localeCompare(b.orgId ?? ''));
    this.problems.sort((a, b) => a.line - b.line);
    return { valid: this.problemCount === 0 && chains.every((c) => c.valid), format, entries: this.entries, chains, problems: this.problems, problemCount: this.problemCount };
  }
}

export interface VerifyOptions {
  file: string;
  publicKeyFile?: string;
  checkpointsFile?: string;
  /** Worker threads for parsing and hashing, besides this one; 0: none. Default: cores - 1, for files of 2 MiB or more. */
  threads?: number;
}

const PARALLEL_MIN_BYTES = 2 << 20;

/** Verifies an export file. Throws UsageError for what is wrong with the request rather than the export. */
export async function verifyExport(options: VerifyOptions): Promise<VerifyReport> {
  if (Boolean(options.publicKeyFile) !== Boolean(options.checkpointsFile)) {
    throw new UsageError('--checkpoints and --public-key go together: checkpoints are only worth their verified signatures');
  }
  const publicKey = options.publicKeyFile ? await loadPublicKey(options.publicKeyFile) : undefined;
  const checkpoints = options.checkpointsFile ? await loadCheckpoints(options.checkpointsFile) : undefined;
  const source = await openExport(options.file);
  const verifier = new ExportVerifier({ ...(checkpoints ? { checkpoints } : {}), ...(publicKey ? { publicKey } : {}), envelope: source.kind === 'lines' && source.format === 'json' });
  if (source.kind === 'entries') {
    if (source.problem) verifier.problem(1, source.problem);
    // Entry numbers stand in for line numbers here.
    source.entries.forEach((value, i) => verifier.add(checkEntry(i + 1, value)));
    return verifier.finish(source.format, source.entries.length);
  }

  const threads = options.threads ?? ((await stat(options.file)).size >= PARALLEL_MIN_BYTES ? defaultThreads() : 0);
  const pool = threads > 0 ? workerPool(threads) : null;
  // Results are taken in file order; chunks no thread is free for are checked right here.
  const results: Promise<ChunkResult>[] = [];
  let line = 1; // the first line of the next result
  const takeOne = async () => {
    const { lines, rows } = await results.shift()!;
    for (const item of rows) {
      item.line += line;
      verifier.add(item);
    }
    line += lines;
  };
  for await (const chunk of source.chunks) {
    // Let the threads' finished work in (a buffered file read resumes without the event loop).
    if (pool) await setImmediate();
    let result = pool?.check(source.format, chunk) ?? null;
    if (result) {
      result.catch(() => {}); // rejected together with the one awaited first
    } else {
      const rows: Checked[] = [];
      const lines = checkLines(source.format, chunk, 0, rows);
      result = Promise.resolve({ lines, rows });
    }
    results.push(result);
    while (results.length > 2 * ((pool?.size ?? 0) + 1)) await takeOne();
  }
  while (results.length > 0) await takeOne();
  return verifier.finish(source.format, line - 1);
}
