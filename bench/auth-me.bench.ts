// The JWT hot path: JWT-authenticated GET /api/v1/auth/me against a bare Fastify route returning the same
// JSON. Targets: >= 0.4x the bare requests/s at saturation; p99 under 10 ms (fixed-rate pass).
import { compareWithBare, createDatabase, FIXED_RATE, startService, type Row } from './harness.js';

export const name = 'auth-me';

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const { service, adminToken } = await startService(database.url);
  try {
    const r = await compareWithBare('/auth/me', `${service.url}/api/v1/auth/me`, { authorization: `Bearer ${adminToken}` });
    const ratio = Math.round((r.rps / r.bareRps) * 100) / 100;
    return [
      { name: 'auth-me: GET /auth/me (JWT) at 50 connections', figure: r.rps, unit: 'req/s', baseline: r.bareRps, ratio, target: '>= 0.6x bare', pass: ratio >= 0.6 }, // issue 19: no regression from 0.65x
      { name: `auth-me: p99 at ${FIXED_RATE} req/s, 1 connection`, figure: r.p99, unit: 'ms', baseline: r.bareP99, ratio: null, target: '< 10 ms', pass: r.p99 < 10 },
      { name: `auth-me: p50 at ${FIXED_RATE} req/s, 1 connection`, figure: r.p50, unit: 'ms', baseline: r.bareP50, ratio: null },
      { name: 'auth-me: p99 at 50 connections (queueing, information)', figure: r.satP99, unit: 'ms', baseline: r.bareSatP99, ratio: null },
    ];
  } finally {
    await service.stop();
    await database.drop();
  }
}
