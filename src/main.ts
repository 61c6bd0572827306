// Start-up only: read config, build the app, listen, and shut down gracefully on SIGINT/SIGTERM.
import { ConfigError, loadConfig, type Config } from './config.js';
import { buildApp } from './app.js';

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

let app: Awaited<ReturnType<typeof buildApp>>;
try {
  app = await buildApp({
    config,
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
