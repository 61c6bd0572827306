// Start-up only: read config, start tracing when asked, build the app, listen, and shut down
// gracefully on SIGINT/SIGTERM.
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig, type Config } from './config.js';
import type { buildApp as BuildApp } from './app.js';

// SIGUSR2 backs up the embedded database (README, "Backing up the embedded database"). Listened
// for before start-up: with no listener, SIGUSR2 would end the process.
let onSigusr2: () => void = () => process.stderr.write('SIGUSR2 received while starting: no backup taken; send it again once the service is ready\n');
process.on('SIGUSR2', () => onSigusr2());

let config: Config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(1);
  }
  throw err;
}

// Imported only with an endpoint set: without one, no OpenTelemetry code is loaded. Before app.js,
// so that pg and ioredis load patched.
const tracing = config.otlpEndpoint
  ? (await import('./observability/tracing.js')).startTracing(
      (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version,
    )
  : undefined;
const { buildApp } = await import('./app.js');
const { backupOnSignal } = await import('./db/embedded-backup.js');

let app: Awaited<ReturnType<typeof BuildApp>>;
try {
  app = await buildApp({
    config,
    ...(tracing ? { tracing } : {}),
    onBootstrap({ email, generatedPassword }) {
      // The one-time reveal of a generated password goes to the terminal, not into the logs.
      const password = generatedPassword ?? '(from BOOTSTRAP_ADMIN_PASSWORD)';
      process.stdout.write(`\n  Created the first administrator: ${email}\n  Password: ${password}\n  It is shown only this once.\n\n`);
    },
  });
  await app.listen({ port: config.port, host: config.host });
} catch (err) {
  process.stderr.write(`start-up failed: ${(err as Error).message}\n`);
  process.exit(1);
}

onSigusr2 = backupOnSignal({ dataDir: config.dataDir, embedded: config.databaseUrl === null, log: app.log });

let closing = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    app.log.info(`${signal} received, closing`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (err: Error) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
