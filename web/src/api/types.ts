// Names for the API's shapes, taken from the generated schema so they follow the service.
import type { paths } from './schema';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body of a path's 200/201 response. */
export type Ok<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R }
  ? R extends { 200: infer S } ? Json<S> : R extends { 201: infer S } ? Json<S> : never
  : never;

export type Me = Ok<'/api/v1/auth/me', 'get'>;
export type Permission = Me['permissions'][number];
type LoginBody = Ok<'/api/v1/auth/login', 'post'>;
export type Tokens = Extract<LoginBody, { accessToken: string }>;
export type MfaChallenge = Extract<LoginBody, { mfaRequired: true }>;
import type { components } from './schema';
/** The service's catalogue of audit action names (src/audit/actions.ts, published in /openapi.json). */
export type AuditAction = components['schemas']['AuditAction'];
