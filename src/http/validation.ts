// Request validation. Bodies are validated strictly (no type coercion, unknown fields rejected by
// the schemas' additionalProperties: false); query strings and path parameters arrive as text, so
// they are coerced ("2" -> 2) before validation. Before any schema, every JSON body and every
// query and path value passes the rules no schema states: bounded nesting, finite numbers, and
// text PostgreSQL can store (no NUL, no unpaired surrogate).
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { AppError, emptyUpdate, invalidRequest, type FieldError } from '../errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  // allErrors stays off: reporting every error of a hostile payload costs more than it helps.
  // strictNumbers: `strict: false` would otherwise let Infinity through integer and number types
  // (a query's "1e309" coerces to Infinity).
  const base: Options = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false, strictNumbers: true };
  const strictAjv = withDates(addFormats(new Ajv({ ...base, coerceTypes: false })));
  const coercingAjv = withDates(addFormats(new Ajv({ ...base, coerceTypes: 'array' })));
  return ({ schema, httpPart, method }) => {
    if (httpPart !== 'body') return decimalIntegersOnly(finiteOnly(coercingAjv.compile(schema as object)));
    const validate = strictAjv.compile(schema as object);
    return method === 'PATCH' ? emptyPatchFirst(validate) : validate;
  };
}

/**
 * API.md §2: a PATCH that names no field it recognises (no body, `{}`, or unknown fields only) is 400
 * EMPTY_UPDATE, before the schema's own rules (a field a PATCH requires, unknown fields) are judged.
 * Recognised: the schema's properties, and its `x-fixed-fields`, fields of the resource a PATCH
 * cannot change (a site's orgId): sending one is a validation failure that says so.
 */
function emptyPatchFirst(validate: ValidateFunction): ValidateFunction {
  const schema = validate.schema as { properties?: object; 'x-fixed-fields'?: string[] };
  const fields = Object.keys(schema.properties ?? {});
  if (fields.length === 0) return validate;
  const known = [...fields, ...(schema['x-fixed-fields'] ?? [])];
  const checked = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    // No body at all (Fastify passes null) is the empty PATCH SPEC names beside `{}`.
    const empty = data === null || data === undefined || (typeof data === 'object' && !Array.isArray(data) && !Object.keys(data).some((name) => known.includes(name)));
    if (empty) {
      return { error: emptyUpdate(`at least one of ${fields.join(', ')}`) };
    }
    const valid = validate(data, context);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return Object.assign(checked, { schema: validate.schema, schemaEnv: validate.schemaEnv });
}

/**
 * RFC 3339 allows a leap second (`23:59:60`), which a JavaScript Date cannot hold: such a value
 * would pass the schema and become an Invalid Date downstream (a 500). `date-time` takes only what
 * a Date can represent.
 */
function withDates(ajv: Ajv): Ajv {
  const rfc3339 = ajv.formats['date-time'] as { validate: (value: string) => boolean; compare: (a: string, b: string) => number | undefined };
  return ajv.addFormat('date-time', { type: 'string', validate: (value) => rfc3339.validate(value) && !Number.isNaN(Date.parse(value)), compare: rfc3339.compare });
}

/**
 * Ajv's coercion turns "1e309" or "Infinity" into Infinity and does not check it again, so an
 * integer without bounds would take it: a query or path value must coerce to a finite number.
 */
function finiteOnly(validate: ValidateFunction): ValidateFunction {
  const checked = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    const valid = validate(data, context);
    checked.errors = validate.errors;
    if (!valid || !data || typeof data !== 'object') return valid;
    for (const [name, value] of Object.entries(data)) {
      if (typeof value === 'number' && !Number.isFinite(value)) {
        checked.errors = [{ instancePath: `/${name}`, schemaPath: '#/type', keyword: 'type', params: {}, message: 'must be a finite number' }];
        return false;
      }
    }
    return true;
  }) as ValidateFunction;
  return Object.assign(checked, { schema: validate.schema, schemaEnv: validate.schemaEnv });
}

/**
 * API.md §4: a query or path value that is not an integer is 400. Ajv's coercion takes whatever
 * JavaScript's Number() takes ("0x10", "1e1", "5.", " " as 0), so an integer parameter's text must
 * first be decimal digits with an optional sign.
 */
const DECIMAL_INTEGER = /^[+-]?[0-9]+$/;
function decimalIntegersOnly(validate: ValidateFunction): ValidateFunction {
  const properties = (validate.schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const integers = Object.keys(properties).filter((name) => properties[name]!.type === 'integer');
  if (integers.length === 0) return validate;
  const checked = ((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    if (data && typeof data === 'object') {
      for (const name of integers) {
        const value = (data as Record<string, unknown>)[name];
        if (!(Array.isArray(value) ? value : [value]).every((text) => typeof text !== 'string' || DECIMAL_INTEGER.test(text))) {
          checked.errors = [{ instancePath: `/${name}`, schemaPath: '#/type', keyword: 'type', params: { type: 'integer' }, message: 'must be integer' }];
          return false;
        }
      }
    }
    const valid = validate(data, context);
    checked.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return Object.assign(checked, { schema: validate.schema, schemaEnv: validate.schemaEnv });
}

const PART_NAMES: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** Turns ajv errors into the `errors: [{path, message}]` of API.md §2. */
export function describeValidationErrors(errors: ErrorObject[], context: string | undefined): FieldError[] {
  const part = PART_NAMES[context ?? 'body'] ?? context ?? 'body';
  return errors.map((e) => {
    const segments = e.instancePath.split('/').filter(Boolean);
    let message = e.message ?? 'is invalid';
    const params = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required':
        segments.push(String(params.missingProperty));
        message = 'is required';
        break;
      case 'additionalProperties':
        segments.push(String(params.additionalProperty));
        message = 'is not an allowed field';
        break;
      case 'enum':
        message = `must be one of: ${(params.allowedValues as unknown[]).join(', ')}`;
        break;
      case 'format':
        message = `must be a valid ${String(params.format)}`;
        break;
    }
    return { path: [part, ...segments].join('.'), message };
  });
}

/** A body's `expiresAt` (already a valid date-time): undefined when absent, else a future Date or 400. */
export function futureExpiry(value: string | undefined, now: number): Date | undefined {
  if (value === undefined) return undefined;
  const at = new Date(value);
  if (at.getTime() <= now) {
    throw new AppError('VALIDATION_FAILED', 'expiresAt must be in the future', { errors: [{ path: 'body.expiresAt', message: 'must be a future date-time' }] });
  }
  return at;
}

/** How deep a JSON body may nest (the top-level object or array is level 1). */
export const MAX_JSON_DEPTH = 32;

/** NUL and unpaired surrogates: PostgreSQL text and jsonb cannot hold them. */
function unstorable(text: string): boolean {
  return text.includes('\u0000') || !text.isWellFormed();
}

/** Text as devices ship it, made storable: NUL and unpaired surrogates become U+FFFD. */
function storableText(text: string): string {
  return text.toWellFormed().replaceAll('\u0000', '\uFFFD');
}

/** A field name as a segment of an error path: short (a key can be a megabyte long) and storable. */
const segment = (name: string) => {
  const short = name.length > 100 ? `${name.slice(0, 100)}…` : name;
  return unstorable(short) ? storableText(short) : short;
};

const refused = (path: string, message: string) => invalidRequest([{ path, message }]);

/**
 * Checks a parsed JSON body in one walk without recursion (so a body nested 100,000 deep cannot
 * overflow the stack): nesting up to MAX_JSON_DEPTH, finite numbers, storable text in values and
 * keys. With `clean` (text that devices report) text is made storable and non-finite numbers
 * become null instead of refused. Returns the 400 to answer, or null.
 */
export function checkJsonBody(body: unknown, clean: boolean): AppError | null {
  if (body === null || typeof body !== 'object') {
    const problem = scalarProblem(body, clean);
    return problem ? refused('body', problem) : null;
  }
  const stack: { node: Record<string, unknown>; depth: number; path: string }[] = [{ node: body as Record<string, unknown>, depth: 1, path: 'body' }];
  while (stack.length > 0) {
    const { node, depth, path } = stack.pop()!;
    if (depth > MAX_JSON_DEPTH) return refused(path, `must be nested at most ${MAX_JSON_DEPTH} levels deep`);
    for (const key of Object.keys(node)) {
      let name = key;
      if (unstorable(key)) {
        if (!clean) return refused(`${path}.${segment(key)}`, 'field names must not contain NUL or unpaired surrogate characters');
        name = storableText(key);
        node[name] = node[key];
        delete node[key];
      }
      const value = node[name];
      if (value !== null && typeof value === 'object') {
        stack.push({ node: value as Record<string, unknown>, depth: depth + 1, path: `${path}.${segment(name)}` });
      } else if (typeof value === 'string' || typeof value === 'number') {
        const problem = scalarProblem(value, clean);
        if (problem) return refused(`${path}.${segment(name)}`, problem);
        if (clean) node[name] = cleanScalar(value);
      }
    }
  }
  return null;
}

function scalarProblem(value: unknown, clean: boolean): string | null {
  if (clean) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) return 'must be a finite number';
  if (typeof value === 'string' && unstorable(value)) return 'must not contain NUL or unpaired surrogate characters';
  return null;
}

function cleanScalar(value: string | number): string | number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  return unstorable(value) ? storableText(value) : value;
}

/** Query and path values: the same text rule as bodies, for the filters and ids that reach SQL. */
export function checkUrlValues(values: unknown, part: 'query' | 'path'): AppError | null {
  if (!values || typeof values !== 'object') return null;
  for (const [name, value] of Object.entries(values)) {
    for (const text of Array.isArray(value) ? value : [value]) {
      if (typeof text === 'string' && unstorable(text)) return refused(`${part}.${segment(name)}`, 'must not contain NUL or unpaired surrogate characters');
    }
    if (unstorable(name)) return refused(`${part}.${segment(name)}`, 'parameter names must not contain NUL or unpaired surrogate characters');
  }
  return null;
}
