// Issue 3: JWT-authenticated GET /api/v1/auth/me against a bare Fastify route returning the same
// JSON. Targets: >= 0.4x the bare requests/s at saturation; p99 under 10 ms (fixed-rate pass).
import { createDatabase, fixedRate, load, median, round, startProcess, FIXED_RATE, RUNS, SATURATION_CONNECTIONS, type LoadResult, type Row } from './harness.js';

export const name = 'auth-me';

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const password = 'bench-password-123';
  const service = await startProcess('src/main.ts', {
    DATABASE_URL: database.url,
    DATA_DIR: `/tmp/dms-bench-${process.pid}`,
    BOOTSTRAP_ADMIN_EMAIL: 'bench@example.test',
    BOOTSTRAP_ADMIN_PASSWORD: password,
    ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}),
  });
  let bare: Awaited<ReturnType<typeof startProcess>> | null = null;
  try {
    const login = await fetch(`${service.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench@example.test', password }),
    });
    const { accessToken } = (await login.json()) as { accessToken: string };
    const headers = { authorization: `Bearer ${accessToken}` };
    const me = await (await fetch(`${service.url}/api/v1/auth/me`, { headers })).text();
    bare = await startProcess('bench/bare-server.ts', { BARE_BODY: me }, '/bare');
    const bareUrl = `${bare.url}/bare`;
    const meUrl = `${service.url}/api/v1/auth/me`;

    // Warm both (JIT, caches, connection pool) before measuring.
    await load(bareUrl, { connections: 10, duration: 2 });
    await load(meUrl, { connections: 10, duration: 2, headers });

    const runs: { bareSat: LoadResult; meSat: LoadResult; bareRate: LoadResult; meRate: LoadResult }[] = [];
    for (let i = 0; i < RUNS; i++) {
      const bareSat = await load(bareUrl, { connections: SATURATION_CONNECTIONS });
      const meSat = await load(meUrl, { connections: SATURATION_CONNECTIONS, headers });
      const bareRate = await fixedRate(bareUrl, { rate: FIXED_RATE });
      const meRate = await fixedRate(meUrl, { rate: FIXED_RATE, headers });
      for (const r of [meSat, meRate]) if (r.non2xx || r.errors) throw new Error(`/auth/me answered ${r.non2xx} non-2xx and ${r.errors} errors`);
      runs.push({ bareSat, meSat, bareRate, meRate });
    }
    const m = (pick: (r: (typeof runs)[number]) => number) => round(median(runs.map(pick)), 3);
    const rps = m((r) => r.meSat.rps);
    const bareRps = m((r) => r.bareSat.rps);
    const ratio = round(rps / bareRps);
    const p99Fixed = m((r) => r.meRate.p99);
    return [
      { name: 'auth-me: GET /auth/me (JWT) at 50 connections', figure: rps, unit: 'req/s', baseline: bareRps, ratio, target: '>= 0.4x bare', pass: ratio >= 0.4 },
      { name: `auth-me: p99 at ${FIXED_RATE} req/s, 1 connection`, figure: p99Fixed, unit: 'ms', baseline: m((r) => r.bareRate.p99), ratio: null, target: '< 10 ms', pass: p99Fixed < 10 },
      { name: `auth-me: p50 at ${FIXED_RATE} req/s, 1 connection`, figure: m((r) => r.meRate.p50), unit: 'ms', baseline: m((r) => r.bareRate.p50), ratio: null },
      { name: 'auth-me: p99 at 50 connections (queueing, information)', figure: m((r) => r.meSat.p99), unit: 'ms', baseline: m((r) => r.bareSat.p99), ratio: null },
    ];
  } finally {
    await bare?.stop();
    await service.stop();
    await database.drop();
  }
}
