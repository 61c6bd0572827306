// The baseline: bare Fastify answering one route with a fixed JSON body, no auth, no database,
// no logging. Started as its own process by bench/run.ts.
import Fastify from 'fastify';

const body = JSON.parse(process.env.BARE_BODY ?? '{"status":"ok"}') as unknown;
const app = Fastify({ logger: false });
app.get('/bare', async () => body);
await app.listen({ port: Number(process.env.PORT ?? 0), host: '127.0.0.1' });
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
