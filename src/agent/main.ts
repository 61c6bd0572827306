// `npm run agent -- --server URL --enrollment-key KEY [--state FILE]`: the reference agent CLI.
// Parses arguments, starts the agent, and stops it cleanly on SIGINT/SIGTERM. Exit codes: 0 after
// a requested stop, 1 when the agent cannot start or its identity is revoked, 2 for usage errors.
import { parseArgs } from 'node:util';
import { AGENT_VERSION, AgentStartError, startAgent, type AgentOptions } from './agent.js';
import { DEFAULT_STATE_PATH } from './state-file.js';

const USAGE = `Usage: npm run agent -- --server URL [--enrollment-key KEY] [options]

The reference agent: enrolls with the service (or reuses the identity saved in the state file),
sends heartbeats, ships its diagnostic logs, and answers live event-log queries over a WebSocket
from a built-in sample event log.

Options:
  --server URL                 base URL of the service, e.g. http://localhost:3000 (required)
  --enrollment-key KEY         enrollment key; required only when the state file holds no identity
  --state FILE                 where the identity is saved (default ${DEFAULT_STATE_PATH}, mode 0600)
  --heartbeat-interval SECONDS override the heartbeat interval the service asks for
  --sample-seed N              seed of the sample event log (default 1)
  --no-websocket               do not open the WebSocket (no live queries)
  --verbose                    print debug lines too
  -h, --help                   show this help
  -v, --version                print the agent version`;

class UsageError extends Error {}

function parseCli(argv: string[]): AgentOptions | 'help' | 'version' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        server: { type: 'string' },
        'enrollment-key': { type: 'string' },
        state: { type: 'string' },
        'heartbeat-interval': { type: 'string' },
        'sample-seed': { type: 'string' },
        'no-websocket': { type: 'boolean' },
        verbose: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values } = parsed;
  if (values.help) return 'help';
  if (values.version) return 'version';
  if (!values.server) throw new UsageError('--server URL is required');
  const options: AgentOptions = { server: values.server };
  const key = values['enrollment-key'];
  if (key !== undefined) {
    if (key.trim() === '') throw new UsageError('--enrollment-key must not be empty');
    options.enrollmentKey = key.trim();
  }
  if (values.state !== undefined) options.statePath = values.state;
  if (values['heartbeat-interval'] !== undefined) {
    const seconds = Number(values['heartbeat-interval']);
    if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--heartbeat-interval must be a positive number of seconds, got ${values['heartbeat-interval']}`);
    options.heartbeatIntervalSeconds = seconds;
  }
  if (values['sample-seed'] !== undefined) {
    const seed = Number(values['sample-seed']);
    if (!Number.isSafeInteger(seed)) throw new UsageError(`--sample-seed must be an integer, got ${values['sample-seed']}`);
    options.sampleSeed = seed;
  }
  if (values['no-websocket']) options.websocket = false;
  if (values.verbose) options.verbose = true;
  return options;
}

async function main(): Promise<number> {
  let options;
  try {
    options = parseCli(process.argv.slice(2));
    if (options !== 'help' && options !== 'version') new URL(options.server);
  } catch (err) {
    process.stderr.write(`agent: ${err instanceof UsageError ? err.message : `--server is not a URL: ${(err as Error).message}`}\n\n${USAGE}\n`);
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (options === 'version') {
    process.stdout.write(`${AGENT_VERSION}\n`);
    return 0;
  }

  let agent;
  try {
    agent = await startAgent(options);
  } catch (err) {
    process.stderr.write(`agent: ${err instanceof AgentStartError ? err.message : (err as Error).stack ?? String(err)}\n`);
    return 1;
  }

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    // A second signal means the user will not wait for the final log flush.
    if (signals > 1) process.exit(130);
    process.stdout.write(`received ${signal}, stopping…\n`);
    void agent.stop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const outcome = await agent.stopped;
  if (outcome.reason === 'revoked') {
    process.stderr.write(`agent: identity revoked (${outcome.detail}); delete ${options.statePath ?? DEFAULT_STATE_PATH} and enroll again\n`);
    return 1;
  }
  return 0;
}

process.exitCode = await main();
// Anything still open (a stuck socket) must not keep a stopped agent alive.
setTimeout(() => process.exit(), 1_000).unref();
