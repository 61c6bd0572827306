// Agent log ingestion on a fresh database with the service started.
// (a) Diagnostic logs: 8 agents (8 devices) each POSTing 500-entry bodies back to back for the
//     run's duration → entries/s, against the same rows inserted raw through a plain pg client
//     (8 connections, the service's own unnest batches of 100, no HTTP, no validation, no RLS).
//     Targets: >= 50,000 entries/s and >= 0.3x raw.
// (b) Event logs with 50% duplicates: 8 agents PUTting 1000 events, half new and half already sent
//     → submitted events/s (target >= 30,000); the stored count must equal the distinct events.
// Medians of RUNS interleaved runs (DESIGN.md §8).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';
import { createDatabase, DURATION_S, median, round, RUNS, startService, type Row } from './harness.js';

export const name = 'agent-logs';
const AGENTS = 8;
const LOGS_PER_REQUEST = 500;
const EVENTS_PER_REQUEST = 1000;
const BODIES_PER_AGENT = 16;

interface Agent { deviceId: string; agentId: string; token: string }

async function createAgents(admin: pg.Client, orgId: string, siteId: string, count: number): Promise<Agent[]> {
  const agents: Agent[] = [];
  for (let i = 0; i < count; i++) {
    const agentId = randomBytes(32).toString('hex');
    const token = randomBytes(32).toString('base64url');
    const { rows } = await admin.query(
      `insert into devices (org_id, site_id, agent_id, auth_token_hash, hostname, os_type, os_version, architecture, agent_version)
       values ($1, $2, $3, $4, $5, 'linux', '6.1', 'x86_64', '1.4.2') returning id`,
      [orgId, siteId, agentId, createHash('sha256').update(token).digest('hex'), `bench-host-${i}`],
    );
    agents.push({ deviceId: rows[0].id as string, agentId, token });
  }
  return agents;
}

const COMPONENTS = ['heartbeat', 'updater', 'ws', 'metrics', 'scripts'];
const LEVELS = ['debug', 'info', 'info', 'warn', 'error'];

/** Realistic, varied log lines: a few templates with changing numbers, some with fields. */
function diagnosticEntries(seed: number): Record<string, unknown>[] {
  const base = Date.now() - 3_600_000;
  return Array.from({ length: LOGS_PER_REQUEST }, (_, i) => {
    const n = seed * LOGS_PER_REQUEST + i;
    return {
      timestamp: new Date(base + n).toISOString(),
      level: LEVELS[n % LEVELS.length],
      component: COMPONENTS[n % COMPONENTS.length],
      message: `${COMPONENTS[n % 5]} cycle ${n}: sent ${n % 977} bytes to wss://api.example.test in ${n % 89} ms (queue ${n % 13}, retry ${n % 3})`,
      ...(n % 2 ? { fields: { attempt: n % 3, latencyMs: n % 89, endpoint: 'wss://api.example.test', ok: n % 7 !== 0 } } : {}),
      agentVersion: '1.4.2',
    };
  });
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 64 });

function send(baseUrl: string, method: string, path: string, token: string, body: string): Promise<{ status: number; body: string }> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { agent: keepAlive, host: url.hostname, port: url.port, path: url.pathname, method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `step` back to back on every agent until the duration is over; returns units per second. */
async function drive(agents: Agent[], step: (agent: Agent, index: number, round: number) => Promise<number>): Promise<number> {
  const started = performance.now();
  const deadline = started + DURATION_S * 1000;
  const done = await Promise.all(agents.map(async (agent, index) => {
    let units = 0;
    for (let r = 0; performance.now() < deadline; r++) units += await step(agent, index, r);
    return units;
  }));
  return done.reduce((a, b) => a + b, 0) / ((performance.now() - started) / 1000);
}

const INSERT_DIAGNOSTIC = `insert into diagnostic_logs (device_id, org_id, timestamp, level, component, message, fields, agent_version)
  select $1, $2, u.ts, u.level, u.component, u.message, u.fields, u.agent_version
  from unnest($3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::jsonb[], $8::text[]) as u(ts, level, component, message, fields, agent_version)`;

/** The baseline: the same rows straight into PostgreSQL, one transaction of five 100-row batches per body. */
async function rawDiagnostic(url: string, orgId: string, bodies: Record<string, unknown>[][]): Promise<number> {
  const clients = await Promise.all(Array.from({ length: AGENTS }, async () => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    return c;
  }));
  const columns = bodies.map((entries) => {
    const batches = [];
    for (let b = 0; b < entries.length; b += 100) {
      const part = entries.slice(b, b + 100);
      const col = (k: string) => part.map((e) => (e[k] === undefined ? null : k === 'fields' ? JSON.stringify(e[k]) : e[k]));
      batches.push([col('timestamp'), col('level'), col('component'), col('message'), col('fields'), col('agentVersion')]);
    }
    return batches;
  });
  try {
    const fakeDevices = clients.map(() => randomUUID());
    return await drive(clients.map((_, i) => ({ deviceId: fakeDevices[i]!, agentId: '', token: '' })), async (agent, i, r) => {
      const c = clients[i]!;
      await c.query('begin');
      for (const batch of columns[(i * BODIES_PER_AGENT + r) % columns.length]!) await c.query(INSERT_DIAGNOSTIC, [agent.deviceId, orgId, ...batch]);
      await c.query('commit');
      return LOGS_PER_REQUEST;
    });
  } finally {
    await Promise.all(clients.map((c) => c.end()));
  }
}

/** One event as JSON text; built once and sent twice (new, then as a duplicate). */
function eventJson(k: number): string {
  return JSON.stringify({
    timestamp: new Date(Date.now() - 60_000 + k).toISOString(),
    level: ['info', 'warning', 'error', 'critical'][k % 4],
    category: ['security', 'hardware', 'application', 'system'][k % 4],
    source: `Source-${k % 16}`,
    eventId: String(k),
    message: `Event ${k}: service state changed to running (pid ${k % 4093})`,
    ...(k % 3 === 0 ? { details: { pid: k % 4093, user: 'SYSTEM' } } : {}),
  });
}

/**
 * Half new, half already sent, interleaved: request r of a device repeats request r-1's new
 * events (request 0 repeats its own). Kept cheap: the load generator shares the machine's CPUs.
 */
function eventBodies(): (r: number) => string {
  const half = EVENTS_PER_REQUEST / 2;
  let previous: string[] = [];
  return (r) => {
    const fresh = Array.from({ length: half }, (_, i) => eventJson(r * half + i));
    const repeated = r === 0 ? [...fresh].reverse() : previous;
    previous = fresh;
    return `{"events":[${fresh.map((e, i) => `${e},${repeated[i]}`).join(',')}]}`;
  };
}

export async function run(): Promise<Row[]> {
  const database = await createDatabase();
  const { service } = await startService(database.url);
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  try {
    const { rows: [partner] } = await admin.query(`insert into partners (name, slug, status) values ('Bench MSP', 'bench-msp', 'active') returning id`);
    const { rows: [org] } = await admin.query(`insert into organizations (partner_id, name, slug) values ($1, 'Customer', 'customer') returning id`, [partner.id]);
    const { rows: [site] } = await admin.query(`insert into sites (org_id, name) values ($1, 'HQ') returning id`, [org.id]);

    // (a) diagnostic logs
    const diagAgents = await createAgents(admin, org.id, site.id, AGENTS);
    const entrySets = Array.from({ length: AGENTS * BODIES_PER_AGENT }, (_, i) => diagnosticEntries(i));
    const bodies = entrySets.map((logs) => JSON.stringify({ logs }));
    let failures = 0;
    let acknowledged = 0;
    const postLogs = async (agent: Agent, i: number, r: number) => {
      const res = await send(service.url, 'POST', `/api/v1/agents/${agent.agentId}/logs`, agent.token, bodies[(i * BODIES_PER_AGENT + r) % bodies.length]!);
      if (res.status !== 201) {
        failures++;
        return 0;
      }
      const { received } = JSON.parse(res.body) as { received: number };
      acknowledged += received;
      return received;
    };
    await Promise.all(diagAgents.map((a, i) => postLogs(a, i, 0))); // warm-up
    const service_: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      service_.push(await drive(diagAgents, postLogs));
      raw.push(await rawDiagnostic(database.url, org.id, entrySets));
    }
    const { rows: [counted] } = await admin.query(`select count(*)::int as n from diagnostic_logs where device_id = any($1::uuid[])`, [diagAgents.map((a) => a.deviceId)]);
    const acknowledgedSoFar = acknowledged;

    // (b) event logs, 50% duplicates
    const eventRates: number[] = [];
    let submittedTotal = 0;
    let countedTotal = 0;
    for (let run = 0; run < RUNS; run++) {
      const agents = await createAgents(admin, org.id, site.id, AGENTS);
      const bodyOf = agents.map(() => eventBodies());
      eventRates.push(await drive(agents, async (agent, i, r) => {
        const res = await send(service.url, 'PUT', `/api/v1/agents/${agent.agentId}/eventlogs`, agent.token, bodyOf[i]!(r));
        if (res.status !== 200) {
          failures++;
          return 0;
        }
        submittedTotal += EVENTS_PER_REQUEST;
        countedTotal += (JSON.parse(res.body) as { count: number }).count;
        return EVENTS_PER_REQUEST;
      }));
    }
    const { rows: [events] } = await admin.query(`select count(*)::int as n from device_event_logs`);
    const distinct = submittedTotal / 2;

    const diag = round(median(service_), 0);
    const diagRaw = round(median(raw), 0);
    const ratio = round(diag / diagRaw);
    const eventRate = round(median(eventRates), 0);
    return [
      { name: `agent-logs: POST /agents/:id/logs, ${AGENTS} agents x ${LOGS_PER_REQUEST} entries`, figure: diag, unit: 'entries/s', baseline: diagRaw, ratio, target: '>= 50000/s and >= 0.3x raw', pass: diag >= 50_000 && ratio >= 0.3 },
      { name: 'agent-logs: diagnostic entries stored = entries acknowledged (201)', figure: counted.n, unit: 'rows', baseline: acknowledgedSoFar, ratio: null, target: '= acknowledged', pass: failures === 0 && counted.n === acknowledgedSoFar },
      { name: `agent-logs: PUT /agents/:id/eventlogs, ${AGENTS} agents x ${EVENTS_PER_REQUEST} events, 50% duplicates`, figure: eventRate, unit: 'submitted events/s', baseline: null, ratio: null, target: '>= 30000/s', pass: eventRate >= 30_000 && failures === 0 },
      { name: 'agent-logs: stored events (counted in responses) = distinct submitted', figure: events.n, unit: 'rows', baseline: distinct, ratio: null, target: '= distinct', pass: events.n === distinct && countedTotal === distinct },
    ];
  } finally {
    keepAlive.destroy();
    await admin.end();
    await service.stop();
    await database.drop();
  }
}
