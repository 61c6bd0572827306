// Schema pieces every module's contract uses.
import { Type, type TSchema } from 'typebox';

export const Uuid = Type.String({ format: 'uuid' });
export const Timestamp = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
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
