// The offline audit verifier: `npm run audit:verify -- --file export.ndjson [--public-key FILE --checkpoints FILE]`.
// Needs no database and none of the service's code beyond the pure hash-chain module (and the
// few lines that start a worker thread).
import { runCli } from './cli.js';

process.exitCode = await runCli(
  process.argv.slice(2),
  (text) => process.stdout.write(`${text}\n`),
  (text) => process.stderr.write(`${text}\n`),
);
