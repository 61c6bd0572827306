// Request validation. Bodies are validated strictly (no type coercion, unknown fields rejected by
// the schemas' additionalProperties: false); query strings and path parameters arrive as text, so
// they are coerced ("2" -> 2) before validation.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { ErrorObject } from 'ajv';
import { AppError, type FieldError } from '../errors.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  // allErrors stays off: reporting every error of a hostile payload costs more than it helps.
  const base: Options = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false };
  const strictAjv = addFormats(new Ajv({ ...base, coerceTypes: false }));
  const coercingAjv = addFormats(new Ajv({ ...base, coerceTypes: 'array' }));
  return ({ schema, httpPart }) => (httpPart === 'body' ? strictAjv : coercingAjv).compile(schema as object);
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
