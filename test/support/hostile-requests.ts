// Hostile requests for every operation of the served OpenAPI document, for hostile-input.test.ts:
// what a careless or malicious client sends (NUL and control characters, lone surrogates, numbers
// JSON allows but JavaScript or PostgreSQL cannot hold, deep nesting, prototype keys, wrong types,
// over-long and empty strings), placed in path parameters, query parameters and JSON bodies that
// start from a valid request derived from the operation's schemas.
import fc from 'fast-check';

type Json = Record<string, unknown>;
export type Schema = Json & {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  $ref?: string;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  minItems?: number;
};
interface Parameter { in: string; name: string; required?: boolean; schema?: Schema }
interface DocumentedOperation { parameters?: Parameter[]; requestBody?: { content?: Record<string, { schema?: Schema }> }; security?: Record<string, string[]>[] }
export interface OpenApi { paths: Record<string, Record<string, DocumentedOperation>>; components?: { schemas?: Record<string, Schema> } }

export type Credential = 'none' | 'jwt' | 'api-key' | 'agent' | 'metrics';

/** JSON text spliced into a body as it is: what JSON.stringify cannot write (1e309, -0, 100,000 levels, duplicate keys). */
export class RawJson {
  constructor(readonly text: string, readonly label = text) {}
  [fc.toStringMethod](): string {
    return `raw(${this.label})`;
  }
}

/** Text spliced into a URL as it is, not percent-encoded: broken escapes, encoded NUL, invalid UTF-8. */
export class RawUrl {
  constructor(readonly text: string) {}
  [fc.toStringMethod](): string {
    return `url(${this.text})`;
  }
}

type UrlValue = string | RawUrl;

/** Valid values the requests start from: tenants' ids for named fields, and a path parameter's target. */
export interface Fixtures {
  named: Record<string, unknown>;
  pathValue(path: string, name: string): string;
}

export interface OperationModel {
  key: string;
  method: string;
  path: string;
  pathParams: Parameter[];
  queryParams: Parameter[];
  body: Schema | undefined;
  credentials: Credential[];
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const SECURITY_CREDENTIAL: Record<string, Credential> = { bearerAuth: 'jwt', apiKeyAuth: 'api-key', agentToken: 'agent', metricsToken: 'metrics' };

export function operationsOf(doc: OpenApi): OperationModel[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).filter(([m]) => HTTP_METHODS.includes(m)).map(([m, op]) => {
      const credentials = (op.security ?? []).flatMap((r) => Object.keys(r).map((s) => SECURITY_CREDENTIAL[s]!));
      return {
        key: `${m.toUpperCase()} ${path}`,
        method: m.toUpperCase(),
        path,
        pathParams: (op.parameters ?? []).filter((p) => p.in === 'path'),
        queryParams: (op.parameters ?? []).filter((p) => p.in === 'query'),
        body: op.requestBody?.content?.['application/json']?.schema,
        credentials: credentials.length ? credentials : ['none'],
      };
    }));
}

// ---- hostile values ------------------------------------------------------------------------------

const UUID = '3f1c2a9e-7b4d-4e8a-9c1f-5a6b7c8d9e0f';
const TRICKY_TEXT = [
  '', ' ', '\t', '\u0000', 'a\u0000b', '\u0000\u0000\u0000', '\uD800', 'x\uDFFFy', '\uDBFF\uDBFF', '\uFEFF', '\uFFFE\uFFFF', '\u2028\u2029',
  '\u001b[31mred', '\r\nX-Injected: 1', '\u0085\u00a0', 'é', 'e\u0301', '🦄', '\u202Egnp.exe',
  '1e309', '-1e309', '-0', 'NaN', 'Infinity', '-Infinity', '9007199254740993', '-9007199254740993', '123456789012345678901234567890',
  '١٢٣', '１２３', '0x10', '0b11', '1_000', ' 7', '7 ', '+7', '.5', '5.', '1.0', '007', '-1', '0', '2147483648', '1e3',
  'true', 'false', 'null', 'undefined', '[]', '{}', '[object Object]',
  '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '__defineGetter__',
  "'; drop table users; --", '" or ""="', '%', '_', '\\', '%_\\', '../../etc/passwd', '${jndi:ldap://x}', '{{7*7}}', '<script>',
  '00000000-0000-0000-0000-000000000000', UUID.toUpperCase(), `${UUID}\u0000`, `{${UUID}}`, UUID.replaceAll('-', ''), `${UUID} `,
  '0000-01-01T00:00:00Z', '9999-12-31T23:59:59.999999999Z', '+275760-09-13T00:00:00.000Z', '-000001-01-01T00:00:00Z', '2024-02-30T00:00:00Z',
  '2024-01-01T24:00:00Z', '1970-01-01T00:00:00+99:99', '2024-01-01', '2024-01-01T00:00:00', '2024-01-01 00:00:00Z',
  'platform', 'System', 'admin', '*', 'a@b', 'user@exämple.test', `${'a'.repeat(64)}@example.test`,
];
const CONTROL_UNITS = [...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)), '\u007f', '\u0080', '\u009f'];
const SURROGATE_UNITS = ['\uD800', '\uDBFF', '\uDC00', '\uDFFF'];
const MIXED_UNITS = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...CONTROL_UNITS) },
  { weight: 2, arbitrary: fc.constantFrom(...SURROGATE_UNITS) },
  { weight: 2, arbitrary: fc.constantFrom('a', 'z', '0', '9', '-', '.', '@', ' ', '%', '_', '\\', '"', '/') },
  { weight: 1, arbitrary: fc.constantFrom('١', '٢', '۳', '٫', 'é', 'ß', '€', '😀', '\u200b', '\uFFFD') },
);
const LONG_TEXT = [17, 51, 65, 101, 129, 256, 1025, 2049, 10_001, 100_001].flatMap((n) => ['x'.repeat(n), 'é'.repeat(n)]);

export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...TRICKY_TEXT) },
  { weight: 4, arbitrary: fc.string({ unit: MIXED_UNITS, minLength: 1, maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constantFrom(...LONG_TEXT) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom('fuzz', UUID, 'admin@example.test', '2030-01-01T00:00:00.000Z'), fc.constantFrom('\u0000', '\uD800', '\n', '%')).map(([a, b]) => a + b) },
);

const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom<unknown>(
      new RawJson('1e309'), new RawJson('-1e309'), new RawJson('-0'), new RawJson('1e-400'), new RawJson('9007199254740993'),
      new RawJson('-9007199254740993'), new RawJson('123456789012345678901234567890'), new RawJson('1E+2'), new RawJson('0.0000000000000000000001'),
      2 ** 31, -(2 ** 31) - 1, 2 ** 53, 2 ** 63, -1, 0, 0.5, 1e21, 1e-7, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 100_000, 100_001, 3651,
    ),
  },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
);

function nested(depth: number, shape: 'object' | 'array' | 'mixed'): RawJson {
  const open = shape === 'object' ? '{"a":' : shape === 'array' ? '[' : '{"a":[';
  const close = shape === 'object' ? '}' : shape === 'array' ? ']' : ']}';
  return new RawJson(`${open.repeat(depth)}1${close.repeat(depth)}`, `${shape} nested ${depth} deep`);
}

const deepNesting = fc.tuple(fc.constantFrom(20, 33, 65, 257, 10_000, 100_000), fc.constantFrom('object', 'array', 'mixed') as fc.Arbitrary<'object' | 'array' | 'mixed'>)
  .map(([depth, shape]) => nested(depth, shape));

const hostileStructure: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, [null], [[]], { '': '' }) },
  { weight: 2, arbitrary: fc.array(hostileText, { maxLength: 3 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      new RawJson('{"__proto__":{"polluted":true}}'), new RawJson('{"constructor":{"prototype":{"polluted":true}}}'),
      new RawJson('{"a":1,"a":{"b":2}}'), new RawJson('{"toString":1,"valueOf":{}}'), new RawJson(`[${'0,'.repeat(50_000)}0]`, '50,001 zeros'),
      new RawJson(`{${Array.from({ length: 5000 }, (_, i) => `"k${i}":${i}`).join(',')}}`, '5,000 keys'),
      new RawJson(`"${'x'.repeat(1_100_000)}"`, '1.1 M characters'),
    ),
  },
);

export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: hostileText },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 3, arbitrary: hostileStructure },
  { weight: 2, arbitrary: deepNesting },
);

/** Bodies that are not JSON, or are JSON only in part. */
const hostileBodyText = fc.constantFrom(
  '{', '{"a":', '[', 'nul', '"\u0000"', '\u0000', '\uFEFF{}', '{}x', '{"a":1}{"b":2}', '1e309', '-0', '"\\ud800"', '"\\u0000"', 'NaN',
  '{"a":NaN}', '[1,]', '{"a" 1}', "{'a':1}", '{"a":1,}', '//x\n{}', '{"\\u0000":1}', ' ', '\n\n', 'null', 'true', '"x"', '[]',
);

const BROKEN_URL = [
  '%00', 'a%00b', '%zz', '%', '%2', '%E0%A4%A', '%ED%A0%80', '%C0%80', '%FF%FE', '%2F', '..%2F..%2F', '%u0000', '+', '%20', '%0D%0A',
  '%F0%9F%98', '%EF%BF%BF', '%25', '%3F', '%23', '%26',
].map((text) => new RawUrl(text));

const hostileUrlValue: fc.Arbitrary<UrlValue> = fc.oneof({ weight: 4, arbitrary: hostileText }, { weight: 1, arbitrary: fc.constantFrom(...BROKEN_URL) });
const JUNK_QUERY_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'a[b]', 'limit[]', 'page[0]', '\u0000', 'x'.repeat(300)];

// ---- requests ------------------------------------------------------------------------------------

type Location = (string | number)[];

export type Mutation =
  | { at: 'path'; name: string; value: UrlValue }
  | { at: 'query'; name: string; values: UrlValue[] }
  | { at: 'body'; location: Location; value: unknown }
  | { at: 'body-key'; location: Location; key: string; value: unknown }
  | { at: 'body-whole'; value: unknown }
  | { at: 'body-text'; text: string };

/** One request as sent, printed short (bodies can be megabytes). */
export class FuzzRequest {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly credential: Credential,
    readonly payload: string | undefined,
    readonly mutations: Mutation[],
  ) {}
  [fc.toStringMethod](): string {
    return this.describe();
  }
  describe(): string {
    const body = this.payload === undefined ? '' : ` body(${this.payload.length} chars)=${JSON.stringify(this.payload.slice(0, 200))}`;
    return `${this.method} ${this.url.length > 300 ? `${this.url.slice(0, 300)}…` : this.url} as ${this.credential}${body}`;
  }
}

function resolve(doc: OpenApi, schema: Schema): Schema {
  const ref = schema.$ref;
  return ref ? resolve(doc, doc.components!.schemas![ref.replace('#/components/schemas/', '')]!) : schema;
}

function firstUsable(doc: OpenApi, schema: Schema): Schema {
  const s = resolve(doc, schema);
  return s.anyOf ? firstUsable(doc, s.anyOf.find((x) => resolve(doc, x).type !== 'null') ?? s.anyOf[0]!) : s;
}

let counter = 0;
const PATTERN_CANDIDATES = () => [`fuzz-${++counter}`, '09:00', new Date(Date.now() + 60_000).toISOString(), 'info', 'a'];

/**
 * A valid value for a schema: required properties (with `withNamed`, also the optional ones the
 * fixtures name, such as orgId), a future date, an id of the fixtures.
 */
export function validSample(doc: OpenApi, schema: Schema, name: string, fx: Fixtures, withNamed = true): unknown {
  const s = firstUsable(doc, schema);
  if (name in fx.named) return structuredClone(fx.named[name]);
  if ('const' in s) return s.const;
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'object': {
      const properties = s.properties ?? {};
      const names = new Set([...(s.required ?? []), ...Object.keys(properties).filter((p) => withNamed && p in fx.named)]);
      if (names.size === 0) {
        const plain = Object.keys(properties).find((p) => ['string', 'integer', 'number', 'boolean'].includes(String(firstUsable(doc, properties[p]!).type)));
        if (plain) names.add(plain);
      }
      return Object.fromEntries([...names].map((p) => [p, validSample(doc, properties[p]!, p, fx, withNamed)]));
    }
    case 'array':
      return Array.from({ length: Number(s.minItems ?? 1) }, () => validSample(doc, s.items ?? {}, name, fx, withNamed));
    case 'string': {
      if (s.format === 'uuid') return UUID;
      if (s.format === 'email') return `fuzz-${++counter}@example.test`;
      if (s.format === 'date-time' && !s.pattern) return new Date(Date.now() + 86_400_000).toISOString();
      const fits = (v: string) => v.length >= Number(s.minLength ?? 0) && v.length <= Number(s.maxLength ?? Infinity) && (!s.pattern || new RegExp(s.pattern).test(v));
      return PATTERN_CANDIDATES().find(fits) ?? 'fuzz';
    }
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      return 'fuzz';
  }
}

/** Every place in a body schema a value can go (objects' properties, an array's first item), a few levels down. */
function locations(doc: OpenApi, schema: Schema, prefix: Location = [], depth = 0): { all: Location[]; objects: Location[] } {
  const s = firstUsable(doc, schema);
  const out = { all: [] as Location[], objects: [] as Location[] };
  if (depth > 5) return out;
  if (s.type === 'object') {
    out.objects.push(prefix);
    for (const [name, child] of Object.entries(s.properties ?? {})) {
      const at = [...prefix, name];
      out.all.push(at);
      const inner = locations(doc, child, at, depth + 1);
      out.all.push(...inner.all);
      out.objects.push(...inner.objects);
    }
  } else if (s.type === 'array' && s.items) {
    const at = [...prefix, 0];
    out.all.push(at);
    const inner = locations(doc, s.items, at, depth + 1);
    out.all.push(...inner.all);
    out.objects.push(...inner.objects);
  }
  return out;
}

/** Sets a property as an own one, even `__proto__`. */
function put(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function containerAt(body: unknown, location: Location): Record<string | number, unknown> {
  let node = body as Record<string | number, unknown>;
  for (let i = 0; i < location.length; i++) {
    const segment = location[i]!;
    let next = Object.hasOwn(node, segment) ? node[segment] : undefined;
    if (!next || typeof next !== 'object' || next instanceof RawJson) {
      next = typeof location[i + 1] === 'number' ? [] : {};
      put(node, segment, next);
    }
    node = next as Record<string | number, unknown>;
  }
  return node;
}

/** JSON text of a value with RawJson pieces spliced in. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  // Indexes only: a fuzzed `constructor` key on an array would break Array.prototype.map.
  if (Array.isArray(value)) return `[${Array.from({ length: value.length }, (_, i) => toJsonText(value[i])).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${toJsonText((value as Json)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Percent-encodes text for a URL, lone surrogates included (as the WTF-8 bytes a careless client sends). */
export function encodeUrlText(text: string): string {
  let out = '';
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(ch);
    }
  }
  return out;
}

const urlText = (value: UrlValue) => (value instanceof RawUrl ? value.text : encodeUrlText(value));

export class RequestBuilder {
  constructor(private readonly doc: OpenApi, private readonly fx: Fixtures) {}

  /** The operation's valid request with the mutations applied; `withNamed`: see validSample. */
  build(op: OperationModel, credential: Credential, mutations: Mutation[], withNamed = true): FuzzRequest {
    const pathValues = new Map<string, UrlValue>(op.pathParams.map((p) => [p.name, this.fx.pathValue(op.path, p.name)]));
    const query: [string, UrlValue][] = op.queryParams
      .filter((p) => p.required || (withNamed && p.name in this.fx.named))
      .map((p) => [p.name, String(validSample(this.doc, p.schema ?? {}, p.name, this.fx))]);
    let body: unknown = op.body ? validSample(this.doc, op.body, 'body', this.fx, withNamed) : undefined;
    let bodyText: string | undefined;
    for (const m of mutations) {
      switch (m.at) {
        case 'path':
          pathValues.set(m.name, m.value);
          break;
        case 'query': {
          const kept = query.filter(([name]) => name !== m.name);
          query.length = 0;
          query.push(...kept, ...m.values.map((v) => [m.name, v] as [string, UrlValue]));
          break;
        }
        case 'body':
        case 'body-key': {
          if (!body || typeof body !== 'object' || body instanceof RawJson) body = {};
          const location = m.at === 'body' ? m.location.slice(0, -1) : m.location;
          const container = containerAt(body, location);
          // A key such as "2147483648" on an array would make it two billion items long to write.
          if (m.at === 'body-key' && Array.isArray(container)) break;
          put(container, m.at === 'body' ? m.location.at(-1)! : m.key, m.value);
          break;
        }
        case 'body-whole':
          body = m.value;
          break;
        case 'body-text':
          bodyText = m.text;
          break;
      }
    }
    const search = query.map(([name, value]) => `${encodeUrlText(name)}=${urlText(value)}`).join('&');
    const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => urlText(pathValues.get(name)!)) + (search ? `?${search}` : '');
    return new FuzzRequest(op.method, url, credential, bodyText ?? (body === undefined ? undefined : toJsonText(body)), mutations);
  }

  /** Requests of an operation with one to three hostile changes to its valid request. */
  arbitrary(op: OperationModel, withNamed = true): fc.Arbitrary<FuzzRequest> {
    const choices: fc.Arbitrary<Mutation>[] = [];
    for (const p of op.pathParams) {
      choices.push(hostileUrlValue.map((value): Mutation => ({ at: 'path', name: p.name, value })));
    }
    const queryNames = [...op.queryParams.map((p) => p.name), ...JUNK_QUERY_NAMES];
    const validQuery = (name: string): UrlValue[] => {
      const p = op.queryParams.find((q) => q.name === name);
      return p ? [String(validSample(this.doc, p.schema ?? {}, name, this.fx))] : ['1'];
    };
    choices.push(
      fc.record({ name: fc.constantFrom(...queryNames), values: fc.array(hostileUrlValue, { minLength: 1, maxLength: 2 }) })
        .map(({ name, values }): Mutation => ({ at: 'query', name, values })),
    );
    if (op.queryParams.length) {
      // A valid optional filter beside a hostile one takes the request further into the handler.
      choices.push(fc.constantFrom(...op.queryParams.map((p) => p.name)).map((name): Mutation => ({ at: 'query', name, values: validQuery(name) })));
    }
    if (op.body) {
      const { all, objects } = locations(this.doc, op.body);
      if (all.length) choices.push(fc.record({ location: fc.constantFrom(...all), value: hostileJson }).map(({ location, value }): Mutation => ({ at: 'body', location, value })));
      if (objects.length) {
        const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', ''), hostileText);
        choices.push(fc.record({ location: fc.constantFrom(...objects), key, value: hostileJson }).map(({ location, key, value }): Mutation => ({ at: 'body-key', location, key, value })));
      }
    }
    if (op.method !== 'GET') {
      choices.push(hostileJson.map((value): Mutation => ({ at: 'body-whole', value })));
      choices.push(hostileBodyText.map((text): Mutation => ({ at: 'body-text', text })));
    }
    return fc
      .record({ credential: fc.constantFrom(...op.credentials), mutations: fc.array(fc.oneof(...choices), { minLength: 1, maxLength: 3 }) })
      .map(({ credential, mutations }) => this.build(op, credential, mutations, withNamed));
  }
}

/** What is wrong with an answer to a hostile request, or null: no 5xx, and every 4xx a problem with a code. */
export function judge(res: { statusCode: number; headers: Record<string, unknown>; body: string }): string | null {
  const got = () => `${res.statusCode} ${res.body.slice(0, 300)}`;
  if (res.statusCode >= 500) return `server error: ${got()}`;
  if (res.statusCode < 400) return null;
  if (!/^application\/problem\+json/.test(String(res.headers['content-type']))) return `4xx without problem+json (${String(res.headers['content-type'])}): ${got()}`;
  let problem: Json;
  try {
    problem = JSON.parse(res.body) as Json;
  } catch {
    return `4xx body is not JSON: ${got()}`;
  }
  if (typeof problem.code !== 'string' || problem.status !== res.statusCode) return `4xx problem without a code or with another status: ${got()}`;
  return null;
}

/** A seed per operation from the run's seed, so one operation's runs do not shift when another is added. */
export function seedFor(base: number, key: string): number {
  let hash = base >>> 0;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 16777619) >>> 0;
  return hash | 0;
}
