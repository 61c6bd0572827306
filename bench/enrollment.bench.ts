// Enrollment under concurrency: 200 concurrent enrollments against two keys with maxUsage 50 (100 agents per key),
// ten times: exactly 50 must succeed per key every time, the rest 401 ENROLLMENT_KEY_EXHAUSTED.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { hashEnrollmentKey } from '../src/enrollment-keys/enrollment-keys.service.js';
import { createDatabase, round, startService, type Row } from './harness.js';

export const name = 'enrollment';
const ROUNDS = 10;
const PEPPER = randomBytes(32).toString('hex');

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const { service } = await startService(database.url, { ENROLLMENT_KEY_PEPPER: PEPPER });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  try {
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench MSP', 'bench-msp', 'active') returning id`);
    const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Customer', 'customer') returning id`, [partner.id]);
    let exact = 0;
    const durations: number[] = [];
    const admitted: number[] = [];
    for (let round_ = 0; round_ < ROUNDS; round_++) {
      const keys = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
      for (const key of keys) {
        await admin.query(`insert into enrollment_keys (org_id, name, key_hash, max_usage, expires_at) values ($1, 'bench', $2, 50, now() + interval '1 hour')`, [org.id, hashEnrollmentKey(PEPPER, key)]);
      }
      const started = performance.now();
      const results = await Promise.all(Array.from({ length: 200 }, (_, i) =>
        fetch(`${service.url}/api/v1/agents/enroll`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ enrollmentKey: keys[i % 2], hostname: `host-${round_}-${i}`, osType: 'linux', osVersion: '6.1', architecture: 'x86_64', agentVersion: '1.0.0' }),
        }).then(async (res) => ({ status: res.status, key: i % 2, body: await res.text() })),
      ));
      durations.push(performance.now() - started);
      const perKey = [0, 1].map((k) => results.filter((r) => r.key === k && r.status === 201).length);
      const others = results.filter((r) => r.status !== 201 && !(r.status === 401 && r.body.includes('ENROLLMENT_KEY_EXHAUSTED')));
      admitted.push(...perKey);
      if (perKey.every((n) => n === 50) && others.length === 0) exact++;
    }
    return [
      { name: `enrollment: rounds of 200 concurrent enrollments (2 keys, maxUsage 50) with exactly 50 per key`, figure: exact, unit: `of ${ROUNDS}`, baseline: null, ratio: null, target: `${ROUNDS} of ${ROUNDS}`, pass: exact === ROUNDS },
      { name: `enrollment: admitted per key (min / max over ${ROUNDS} rounds)`, figure: Math.min(...admitted), unit: `/ ${Math.max(...admitted)}`, baseline: null, ratio: null },
      { name: 'enrollment: median time for a round of 200', figure: round([...durations].sort((a, b) => a - b)[Math.floor(durations.length / 2)]!, 1), unit: 'ms', baseline: null, ratio: null },
    ];
  } finally {
    await admin.end();
    await service.stop();
    await database.drop();
  }
}
