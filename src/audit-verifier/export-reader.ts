// Reads an audit export file, streaming: ndjson (one entry per line), or the json format, whose
// envelope the service writes one entry per line (`{"data":[` / entries / `],"count":…}`). The
// file comes in chunks of about 256 KiB cut at line ends, to be checked on this thread or in worker
// threads (small enough to share a 10,000-row export out evenly). A json document laid out any other way (pretty-printed by a tool) is parsed whole: an
// export holds at most 10,000 rows, so that stays bounded.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { LineFormat } from './row-check.js';

export type ExportFormat = LineFormat;

export class UsageError extends Error {}

const CHUNK = 1 << 18;
const JSON_HEAD = '{"data":[';
const CSV_HEAD = 'id,orgId,seq,';

export type ExportSource =
  /** Whole lines, a chunk at a time. */
  | { format: ExportFormat; kind: 'lines'; chunks: AsyncGenerator<Buffer> }
  /** A json document parsed whole: its entries, with a problem found in the envelope if any. */
  | { format: 'json'; kind: 'entries'; entries: unknown[]; problem: string | null };

/** The file in chunks that end at a line end (the last one may not). */
async function* lineChunks(file: string): AsyncGenerator<Buffer> {
  let carry: Buffer | null = null;
  for await (const read of createReadStream(file, { highWaterMark: CHUNK }) as AsyncIterable<Buffer>) {
    const buf: Buffer = carry ? Buffer.concat([carry, read]) : read;
    const cut = buf.lastIndexOf(10);
    if (cut < 0) {
      carry = buf; // a line longer than a chunk
      continue;
    }
    carry = cut + 1 < buf.length ? Buffer.from(buf.subarray(cut + 1)) : null;
    yield buf.subarray(0, cut + 1);
  }
  if (carry) yield carry;
}

/** The first non-empty line of a chunk, or null. */
function firstLine(chunk: Buffer): string | null {
  let start = 0;
  while (start < chunk.length) {
    const end = chunk.indexOf(10, start);
    const line = chunk.toString('utf8', start, end < 0 ? chunk.length : end).trim();
    if (line !== '') return line;
    if (end < 0) return null;
    start = end + 1;
  }
  return null;
}

/** An ndjson entry, the start of a json document laid out some other way, or neither. */
function firstLineKind(line: string): 'entry' | 'document' | 'other' {
  try {
    const value = JSON.parse(line) as unknown;
    if (Array.isArray(value) || (typeof value === 'object' && value !== null && 'data' in value)) return 'document';
    return typeof value === 'object' && value !== null ? 'entry' : 'other';
  } catch {
    if (line.startsWith('[') || /^\{\s*("data"\s*:.*)?$/.test(line)) return 'document';
    // A broken first entry of an ndjson file: reported as such, line by line.
    return line.startsWith('{') ? 'entry' : 'other';
  }
}

/** Opens the file and tells its format from the first non-empty line. */
export async function openExport(file: string): Promise<ExportSource> {
  const chunks = lineChunks(file);
  const seen: Buffer[] = [];
  let first: string | null = null;
  try {
    for (;;) {
      const next = await chunks.next();
      if (next.done) break;
      seen.push(next.value);
      first = firstLine(next.value);
      if (first !== null) break;
    }
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const replay = async function* (): AsyncGenerator<Buffer> {
    yield* seen;
    yield* chunks;
  };
  if (first === null || first === JSON_HEAD) return { format: first === null ? 'ndjson' : 'json', kind: 'lines', chunks: replay() };
  if (first.startsWith(CSV_HEAD)) {
    await chunks.return(undefined);
    throw new UsageError(`${file} is a CSV export; the verifier reads ndjson or json exports (format=ndjson)`);
  }
  const kind = firstLineKind(first);
  if (kind === 'entry') return { format: 'ndjson', kind: 'lines', chunks: replay() };
  await chunks.return(undefined);
  if (kind === 'other') throw new UsageError(`${file} is neither an ndjson nor a json audit export`);
  return wholeDocument(file);
}

async function wholeDocument(file: string): Promise<ExportSource> {
  let doc: unknown;
  try {
    doc = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    return { format: 'json', kind: 'entries', entries: [], problem: `not valid JSON: ${(err as Error).message}` };
  }
  const data = Array.isArray(doc) ? doc : (doc as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return { format: 'json', kind: 'entries', entries: [], problem: 'a json export holds {"data": [entries]}' };
  const count = Array.isArray(doc) ? undefined : (doc as { count?: unknown }).count;
  const problem = count !== undefined && count !== data.length ? `the envelope says count ${String(count)}, the file holds ${data.length} entries` : null;
  return { format: 'json', kind: 'entries', entries: data, problem };
}
