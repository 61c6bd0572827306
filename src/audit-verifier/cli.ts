// `npm run audit:verify -- --file export.ndjson [--public-key FILE --checkpoints FILE] [--json]`
// Exit 0: every chain verifies; 1: something does not (the first bad seq and reason are printed);
// 2: usage error (bad flags, unreadable file or key).
import { parseArgs } from 'node:util';
import type { Break } from './chain-links.js';
import { UsageError } from './export-reader.js';
import { verifyExport, type ChainReport, type VerifyReport } from './verify-export.js';

export const USAGE = `usage: npm run audit:verify -- --file EXPORT [--public-key FILE --checkpoints FILE] [--json] [--threads N]

  --file EXPORT        an audit export: format=ndjson or format=json of GET /api/v1/audit-logs/export
  --public-key FILE    PEM (SPKI) Ed25519 key, or the JSON of GET /api/v1/audit-logs/public-key
  --checkpoints FILE   the JSON of GET /api/v1/audit-logs/checkpoints ({"data": [...]}) or an array of checkpoints
  --json               print the report as JSON
  --threads N          worker threads besides the main one (default: cores - 1 for files of 2 MiB or more; 0: none)

Exit status: 0 valid, 1 not valid, 2 usage error.`;

function describeBreak(brk: Break): string {
  return `first bad seq ${brk.seq}: ${brk.reason} (${brk.detail}${brk.id ? `; row ${brk.id}` : ''})`;
}

function describeChain(chain: ChainReport): string {
  const name = chain.orgId === null ? 'platform chain' : `chain ${chain.orgId}`;
  const range = chain.firstSeq === null ? 'no sealed rows' : `${chain.rows} rows, seq ${chain.firstSeq}..${chain.lastSeq}`;
  const notes: string[] = [];
  if (chain.startsMidChain) notes.push(`starts at seq ${chain.firstSeq} (after an anchor or mid-chain: its prevChecksum is not checked)`);
  if (chain.pending) notes.push(`${chain.pending} pending rows skipped`);
  const { matched, outsideExport, invalid } = chain.checkpoints;
  if (matched || outsideExport || invalid) notes.push(`checkpoints: ${matched} matched, ${outsideExport} outside the export, ${invalid} invalid`);
  const verdict = chain.valid ? 'OK' : `FAILED, ${describeBreak(chain.brokenAt!)}${chain.breaks > 1 ? ` (${chain.breaks} breaks in all)` : ''}`;
  return `${name}: ${range}: ${verdict}${notes.length ? `\n  ${notes.join('\n  ')}` : ''}`;
}

export function formatReport(report: VerifyReport, seconds?: number): string {
  const lines = report.chains.map(describeChain);
  for (const p of report.problems.slice(0, 20)) lines.push(`line ${p.line}: ${p.reason}: ${p.detail}`);
  if (report.problemCount > 20) lines.push(`… and ${report.problemCount - 20} more malformed entries`);
  const speed = seconds ? ` in ${seconds.toFixed(2)} s` : '';
  lines.push(`${report.valid ? 'VALID' : 'NOT VALID'}: ${report.entries} entries (${report.format}), ${report.chains.length} chains${speed}`);
  return lines.join('\n');
}

export async function runCli(argv: string[], out: (text: string) => void, err: (text: string) => void): Promise<number> {
  let values: { file?: string; 'public-key'?: string; checkpoints?: string; json?: boolean; threads?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        file: { type: 'string' },
        'public-key': { type: 'string' },
        checkpoints: { type: 'string' },
        json: { type: 'boolean' },
        threads: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (e) {
    err(`${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    out(USAGE);
    return 0;
  }
  if (!values.file) {
    err(`--file is required\n${USAGE}`);
    return 2;
  }
  const threads = values.threads === undefined ? undefined : Number(values.threads);
  if (threads !== undefined && !(Number.isInteger(threads) && threads >= 0 && threads <= 64)) {
    err(`--threads takes a whole number from 0 to 64\n${USAGE}`);
    return 2;
  }
  const started = performance.now();
  try {
    const report = await verifyExport({
      file: values.file,
      ...(values['public-key'] ? { publicKeyFile: values['public-key'] } : {}),
      ...(values.checkpoints ? { checkpointsFile: values.checkpoints } : {}),
      ...(threads !== undefined ? { threads } : {}),
    });
    const seconds = (performance.now() - started) / 1000;
    out(values.json ? JSON.stringify(report, null, 2) : formatReport(report, seconds));
    return report.valid ? 0 : 1;
  } catch (e) {
    if (e instanceof UsageError) {
      err(`${e.message}\n${USAGE}`);
      return 2;
    }
    throw e;
  }
}
