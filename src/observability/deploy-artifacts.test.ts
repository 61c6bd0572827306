// The operations files under deploy/ against the service they describe: promtool accepts the alert
// rules and their unit tests pass (deploy/alerts.test.yml makes every alert fire, and some stay
// quiet below their threshold); the Grafana dashboard is import-ready (one ${DS_PROMETHEUS} input,
// unique panel ids, an instance variable) and every panel expression is valid PromQL; and every
// metric the dashboard, the alerts and their tests name is in a real GET /metrics exposition
// after some traffic, so renaming or dropping a metric fails here. Without promtool a developer
// gets a skip for the promtool steps, as prometheus.test.ts does; CI must have it (.ci/run).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { testApp, type TestApp } from '../../test/support/app.js';
import { as, assertProblem, login } from '../../test/support/clients.js';
import { createOrg, createPartner, createUser } from '../../test/support/factory.js';
import { promtoolPath } from '../../test/support/prometheus.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DEPLOY = path.join(ROOT, 'deploy');
const TOKEN = 'metrics-token-for-deploy-artifacts-0123456789';
const DATASOURCE = { type: 'prometheus', uid: '${DS_PROMETHEUS}' };
/** Series Prometheus makes itself for every target, not in any exposition. */
const PROMETHEUS_SERIES = new Set(['up']);

const promtoolSkip = !promtoolPath() && !process.env.CI ? 'promtool is not installed (apt-get install prometheus); skipping the promtool checks' : false;

function promtool(...args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    // In CI a missing binary fails here (ENOENT) instead of skipping.
    const child = spawn(promtoolPath() ?? 'promtool', args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code: code ?? 1, output }));
  });
}

// --- the dashboard -----------------------------------------------------------------------------

interface Target { refId?: string; expr?: string; datasource?: unknown }
interface Panel { id: number; type: string; title: string; datasource?: unknown; targets?: Target[]; panels?: Panel[] }
interface Dashboard {
  __inputs: { name: string; type: string; pluginId: string }[];
  schemaVersion: number;
  panels: Panel[];
  templating: { list: { name: string; type: string; datasource?: unknown; query: string | { query: string } }[] };
}

const dashboardText = readFileSync(path.join(DEPLOY, 'grafana-dashboard.json'), 'utf8');

/** Every panel, those inside rows included. */
function panelsOf(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
}

/** Every panel query: where it is (for messages), a name for it (a valid metric name), its expression. */
function dashboardExpressions(dashboard: Dashboard): { where: string; name: string; expr: string }[] {
  return panelsOf(dashboard).flatMap((p) => (p.targets ?? []).map((t) => ({
    where: `panel "${p.title}" (${t.refId})`,
    name: `dashboard:panel_${p.id}_${t.refId}`,
    expr: t.expr ?? '',
  })));
}

/** The metric label_values(metric, label) reads, from the instance variable's query. */
function variableMetric(dashboard: Dashboard): string {
  const variable = dashboard.templating.list.find((v) => v.name === 'instance');
  assert.ok(variable, 'an instance template variable');
  const query = typeof variable.query === 'string' ? variable.query : variable.query.query;
  const match = /^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{[^}]*\})?\s*,\s*instance\s*\)$/.exec(query);
  assert.ok(match, `the instance variable lists label_values(<metric>, instance), got ${query}`);
  return match[1]!;
}

/** A Grafana expression as plain PromQL: its variables replaced by what they stand for. */
function asPromql(expr: string): string {
  const plain = expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m').replace(/\$\{instance\}|\$instance\b/g, '.*');
  assert.ok(!plain.includes('$'), `an unknown Grafana variable in ${expr}`);
  return plain;
}

// --- PromQL: the metric selectors of an expression --------------------------------------------

const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'group', 'stddev', 'stdvar', 'count', 'count_values', 'bottomk', 'topk', 'quantile', 'limitk', 'limit_ratio']);
/** Keywords followed by a list of label names in parentheses. */
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'atan2', 'bool', 'offset', 'inf', 'nan']);

interface Selector { name: string; matchers: string }

/** The end of the bracketed group opening at `start` (quoted strings may hold any bracket). */
function closing(expr: string, start: number): number {
  const open = expr[start]!;
  const close = ({ '(': ')', '{': '}', '[': ']' } as Record<string, string>)[open]!;
  let depth = 0;
  for (let i = start; i < expr.length; i++) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') {
      i = endOfString(expr, i);
    } else if (c === open) {
      depth++;
    } else if (c === close && --depth === 0) {
      return i;
    }
  }
  throw new Error(`unbalanced ${open} in ${expr}`);
}

function endOfString(expr: string, start: number): number {
  const quote = expr[start]!;
  for (let i = start + 1; i < expr.length; i++) {
    if (expr[i] === '\\' && quote !== '`') i++;
    else if (expr[i] === quote) return i;
  }
  throw new Error(`unterminated string in ${expr}`);
}

const nextNonSpace = (expr: string, from: number) => {
  let i = from;
  while (i < expr.length && /\s/.test(expr[i]!)) i++;
  return i;
};

/** The metric selectors of a PromQL expression: a name, and its matchers' text ('' when none). */
function metricSelectors(expr: string): Selector[] {
  const found: Selector[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (c === '"' || c === "'" || c === '`') {
      i = endOfString(expr, i) + 1; // a function's string argument (label_replace), never a metric
    } else if (c === '[') {
      i = closing(expr, i) + 1; // a range or subquery: durations, Grafana's $__rate_interval
    } else if (c === '{') {
      throw new Error(`a selector without a metric name cannot be checked: ${expr}`);
    } else if (c === '$') {
      throw new Error(`a Grafana variable outside a matcher or range: ${expr}`);
    } else if (/[0-9.]/.test(c)) {
      i += /^(0x[0-9a-f]+|[0-9]*\.?[0-9]+(e[+-]?[0-9]+)?)/i.exec(expr.slice(i))?.[0].length || 1;
    } else if (/[a-zA-Z_:]/.test(c)) {
      const word = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i))![0];
      i += word.length;
      const next = nextNonSpace(expr, i);
      if (LABEL_LISTS.has(word)) {
        if (expr[next] === '(') i = closing(expr, next) + 1;
      } else if (AGGREGATIONS.has(word) || KEYWORDS.has(word)) {
        // an operator: its label list, if any, comes next as `by (...)`
      } else if (expr[next] === '(') {
        // a function
      } else if (expr[next] === '{') {
        const end = closing(expr, next);
        found.push({ name: word, matchers: expr.slice(next + 1, end) });
        i = end + 1;
      } else {
        found.push({ name: word, matchers: '' });
      }
    } else {
      i++;
    }
  }
  return found;
}

// --- the alert rules ---------------------------------------------------------------------------

const alertsText = readFileSync(path.join(DEPLOY, 'alerts.yml'), 'utf8');
const alertTestsText = readFileSync(path.join(DEPLOY, 'alerts.test.yml'), 'utf8');

/**
 * The `expr:` of every rule, plain or as a block scalar (| or >). Counted against the rules by the
 * test, so a form this reader misses fails instead of going unchecked; promtool checks the syntax.
 */
function ruleExpressions(yaml: string): string[] {
  const lines = yaml.split('\n');
  const exprs: string[] = [];
  for (let n = 0; n < lines.length; n++) {
    const match = /^(\s*)expr:\s*(.*?)\s*$/.exec(lines[n]!);
    if (!match) continue;
    const indent = match[1]!.length;
    const rest = match[2]!;
    if (/^[|>][+-]?$/.test(rest)) {
      const block: string[] = [];
      while (n + 1 < lines.length && (lines[n + 1]!.trim() === '' || /^\s*/.exec(lines[n + 1]!)![0].length > indent)) block.push(lines[++n]!.trim());
      exprs.push(block.join(' ').trim());
    } else {
      const quoted = /^(['"])(.*)\1$/.exec(rest);
      exprs.push(quoted ? quoted[2]! : rest);
    }
  }
  return exprs;
}

/** The metric names the unit tests feed in (`series: 'name{...}'`). */
function inputSeriesNames(yaml: string): string[] {
  return [...yaml.matchAll(/^\s*-?\s*series:\s*['"]?([a-zA-Z_:][a-zA-Z0-9_:]*)/gm)].map((m) => m[1]!);
}

// --- the exposition ----------------------------------------------------------------------------

/**
 * The series names an exposition offers: every family's name as its type writes it (a histogram as
 * _bucket, _sum and _count, never its bare name), and every sample's. Families with no sample yet
 * (a label never seen, a pool the embedded database has not) are declared all the same.
 */
function exposedNames(text: string): { names: Set<string>; histograms: Set<string>; sampled: Set<string> } {
  const names = new Set<string>();
  const histograms = new Set<string>();
  const sampled = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      const name = type[1]!;
      const kind = type[2]!;
      if (kind === 'histogram') {
        histograms.add(name);
        for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
      } else if (kind === 'summary') {
        for (const suffix of ['', '_sum', '_count']) names.add(name + suffix);
      } else {
        names.add(name);
      }
    } else if (line && !line.startsWith('#')) {
      const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
      if (sample) {
        names.add(sample[1]!);
        sampled.add(sample[1]!);
      }
    }
  }
  return { names, histograms, sampled };
}

describe('deploy/alerts.yml with promtool', { skip: promtoolSkip }, () => {
  it('passes `promtool check rules`', async () => {
    const { code, output } = await promtool('check', 'rules', 'deploy/alerts.yml');
    assert.equal(code, 0, output);
    assert.match(output, /SUCCESS: \d+ rules found/);
  });

  it('passes its unit tests (`promtool test rules deploy/alerts.test.yml`)', async () => {
    const { code, output } = await promtool('test', 'rules', 'deploy/alerts.test.yml');
    assert.equal(code, 0, output);
    assert.match(output, /SUCCESS/);
  });

  it('has a test making each alert fire', () => {
    const alerts = [...alertsText.matchAll(/^\s*- alert:\s*(\S+)/gm)].map((m) => m[1]!);
    const firing = new Set([...alertTestsText.matchAll(/alertname:\s*(\S+)\s*\n\s*exp_alerts:\s*\n\s*- exp_labels/g)].map((m) => m[1]!));
    assert.deepEqual(alerts.filter((a) => !firing.has(a)), [], 'alerts no test makes fire');
  });

  it('has a severity, a `for:`, a summary and a description on every rule', () => {
    const rules = alertsText.split(/^\s*- alert:/m).slice(1);
    assert.ok(rules.length >= 5);
    for (const rule of rules) {
      const name = rule.trim().split('\n')[0];
      assert.match(rule, /^\s*for:\s*\d+[smh]/m, `${name}: for`);
      assert.match(rule, /^\s*severity:\s*(critical|warning)\s*$/m, `${name}: severity`);
      assert.match(rule, /^\s*summary:/m, `${name}: summary`);
      assert.match(rule, /^\s*description:/m, `${name}: description`);
    }
  });
});

describe('deploy/grafana-dashboard.json', () => {
  const dashboard = JSON.parse(dashboardText) as Dashboard;

  it('asks for its Prometheus data source on import, and every panel and query uses it', () => {
    assert.deepEqual(dashboard.__inputs.map((i) => [i.name, i.type, i.pluginId]), [['DS_PROMETHEUS', 'datasource', 'prometheus']]);
    assert.ok(dashboard.schemaVersion >= 36 && dashboard.schemaVersion <= 41, `schemaVersion ${dashboard.schemaVersion}`);
    for (const panel of panelsOf(dashboard)) {
      assert.deepEqual(panel.datasource, DATASOURCE, `panel ${panel.id} "${panel.title}"`);
      for (const target of panel.targets ?? []) assert.deepEqual(target.datasource ?? DATASOURCE, DATASOURCE, `panel "${panel.title}" ${target.refId}`);
    }
    for (const variable of dashboard.templating.list) assert.deepEqual(variable.datasource, DATASOURCE, `variable ${variable.name}`);
    // No data source left over from the dashboard this one was exported from.
    const uids = [...dashboardText.matchAll(/"uid":\s*"([^"]*)"/g)].map((m) => m[1]);
    assert.deepEqual([...new Set(uids)].sort(), ['${DS_PROMETHEUS}', '-- Grafana --', 'dms-overview'].sort());
  });

  it('has unique panel ids, and a query in every panel but the rows', () => {
    const ids = panelsOf(dashboard).map((p) => p.id);
    assert.ok(ids.every((id) => Number.isInteger(id) && id > 0));
    assert.equal(new Set(ids).size, ids.length, `duplicate panel ids: ${ids}`);
    for (const panel of panelsOf(dashboard).filter((p) => p.type !== 'row')) {
      assert.ok((panel.targets ?? []).length > 0 && panel.targets!.every((t) => t.expr?.trim()), `panel "${panel.title}" has a query`);
    }
  });

  it('has an instance variable, and every selector filters by it', () => {
    variableMetric(dashboard);
    for (const { where, expr } of dashboardExpressions(dashboard)) {
      for (const selector of metricSelectors(expr)) {
        assert.match(selector.matchers, /\binstance=~"\$instance"/, `${where}: ${selector.name} not filtered by $instance`);
      }
    }
  });

  it('has only valid PromQL in its panels (promtool check rules)', { skip: promtoolSkip }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dms-dashboard-rules-'));
    try {
      // Each query as a recording rule named after its panel and refId, for promtool's messages.
      const rules = dashboardExpressions(dashboard).map(({ name, expr }) => ({ record: name, expr: asPromql(expr) }));
      const file = path.join(dir, 'dashboard-rules.yml');
      // JSON is YAML: no quoting to get wrong.
      await writeFile(file, JSON.stringify({ groups: [{ name: 'dashboard', rules }] }, null, 2));
      const { code, output } = await promtool('check', 'rules', file);
      assert.equal(code, 0, output);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('reading metric names out of PromQL', () => {
  it('reads the metric names out of expressions of every shape deploy/ uses', () => {
    assert.deepEqual(metricSelectors('histogram_quantile(0.99, sum by (le, route) (rate(dms_x_bucket{instance=~"$instance",status=~"5.."}[$__rate_interval])))'), [
      { name: 'dms_x_bucket', matchers: 'instance=~"$instance",status=~"5.."' },
    ]);
    assert.deepEqual(metricSelectors('up{job="a"} == 1 unless on (job, instance) dms_y'), [{ name: 'up', matchers: 'job="a"' }, { name: 'dms_y', matchers: '' }]);
    assert.deepEqual(metricSelectors('sum(a) / max without (x) (b) > 0.9 and sum by (job) (rate(c[5m])) > 1e3').map((s) => s.name), ['a', 'b', 'c']);
  });
});

describe('the metrics the dashboard and the alerts use, in a real GET /metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp({ env: { METRICS_TOKEN: TOKEN } });
  });
  after(() => t?.close());

  it('exports every metric they name (histograms as _bucket/_sum/_count), after some traffic', async () => {
    // Traffic: a health check, an unmatched route, a failed and a good sign-in, an authenticated read.
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/no/such/route' })).statusCode, 404);
    const org = await createOrg(t.db, (await createPartner(t.db)).id);
    const user = await createUser(t.db, { scope: 'organization', orgId: org.id, role: 'admin' });
    assertProblem(await t.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: 'not the password' } }), 401, 'UNAUTHENTICATED');
    const session = await login(t.app, user);
    assert.equal((await as(t.app, session)({ method: 'GET', url: '/api/v1/auth/me' })).statusCode, 200);

    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.statusCode, 200, res.body);
    const { names, histograms, sampled } = exposedNames(res.body);
    assert.ok(sampled.has('dms_http_requests_total') && sampled.has('dms_http_request_duration_seconds_bucket'), 'the traffic was counted');

    const dashboard = JSON.parse(dashboardText) as Dashboard;
    const uses = new Map<string, string>(); // metric → where it is first used
    const use = (name: string, where: string) => uses.has(name) || uses.set(name, where);
    use(variableMetric(dashboard), 'the instance variable');
    for (const { where, expr } of dashboardExpressions(dashboard)) for (const s of metricSelectors(expr)) use(s.name, where);
    const alertExprs = ruleExpressions(alertsText);
    assert.equal(alertExprs.length, [...alertsText.matchAll(/^\s*- (alert|record):/gm)].length, 'an expression read for every rule');
    for (const expr of alertExprs) for (const s of metricSelectors(expr)) use(s.name, `deploy/alerts.yml: ${expr}`);
    for (const name of inputSeriesNames(alertTestsText)) use(name, 'deploy/alerts.test.yml input series');
    assert.ok(uses.size >= 30, `only ${uses.size} metrics found in the dashboard and alerts`);

    const missing = [...uses].filter(([name]) => !PROMETHEUS_SERIES.has(name) && !names.has(name)).map(([name, where]) => {
      const hint = histograms.has(name) ? ' (a histogram: use its _bucket, _sum or _count)' : '';
      return `${name}${hint}, used in ${where}`;
    });
    assert.deepEqual(missing, [], 'metrics used by deploy/ that GET /metrics does not export');
  });
});
