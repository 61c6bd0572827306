// Schema pieces every module's contract uses.
import { Type, type TNull, type TSchema, type TSchemaOptions, type TUnion } from 'typebox';

export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
/**
 * A string enum, typed `string`: fast-json-stringify writes an enum without a `type` through
 * JSON.stringify, several times slower, and the OpenAPI document is more precise with it.
 */
export const StringEnum = <const Values extends string[]>(values: readonly [...Values], options?: TSchemaOptions) =>
  Type.Enum(values, { ...options, type: 'string' });
const PRIMITIVE_TYPES: ReadonlySet<unknown> = new Set(['string', 'integer', 'number', 'boolean']);
/**
 * `T | null`. A primitive schema becomes `type: [T, "null"]` rather than an `anyOf`:
 * fast-json-stringify chooses an `anyOf` branch by running the validator on every value it writes
 * (the uuid pattern for each id), and a refused value gets one error instead of one per branch.
 * Objects, enums and constants stay a union.
 */
export function Nullable<T extends TSchema>(schema: T, options?: TSchemaOptions): TUnion<[T, TNull]> {
  const s = schema as Record<string, unknown>;
  if (PRIMITIVE_TYPES.has(s.type) && s.enum === undefined && s.const === undefined) {
    return Type.Unsafe({ ...s, ...options, type: [s.type, 'null'] }) as unknown as TUnion<[T, TNull]>;
  }
  return Type.Union([schema, Type.Null()], options);
}
export const IdParams = Type.Object({ id: Uuid });
export const Success = Type.Object({ success: Type.Literal(true) });
/** The `:id` of /agents/:id/… routes: the agentId (64 hex characters; anything else is an unknown agent, 404). */
export const AgentParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128, description: 'the agentId' }) });
/**
 * `search` on a list (API.md §4): a literal, case-insensitive substring of one text field, `%`, `_`
 * and `\` included; an empty value counts as absent. At most 255 characters, the longest name it
 * could match.
 */
export const SearchFilter = (field: string) =>
  Type.Optional(Type.String({ maxLength: 255, description: `Case-insensitive literal substring of the ${field} (%, _ and \\ match themselves); empty counts as absent` }));
