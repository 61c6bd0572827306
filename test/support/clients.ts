// HTTP helpers for tests: sign in (with or without MFA) and call the API as that user.
import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { totpCode } from '../../src/identity/totp.js';
import type { TestClock } from './app.js';
import type { TestUser } from './factory.js';

export interface Session {
  accessToken: string;
  refreshToken: string;
  totpSecret?: string;
}

export async function login(app: FastifyInstance, user: Pick<TestUser, 'email' | 'password'>): Promise<Session> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assert.ok(body.accessToken, `expected tokens, got ${res.body}`);
  return { accessToken: body.accessToken, refreshToken: body.refreshToken };
}

/** Enrols TOTP for the user and signs in again through the MFA step: an MFA-verified session. */
export async function loginWithMfa(app: FastifyInstance, user: TestUser, clock: TestClock): Promise<Session> {
  const first = await login(app, user);
  const setup = await app.inject({ method: 'POST', url: '/api/v1/auth/mfa/setup', headers: bearer(first) });
  assert.equal(setup.statusCode, 200, setup.body);
  const { secret } = setup.json();
  const enable = await app.inject({
    method: 'POST', url: '/api/v1/auth/mfa/enable', headers: bearer(first), payload: { code: totpCode(secret, clock.now()) },
  });
  assert.equal(enable.statusCode, 200, enable.body);
  // The enabling code is spent; the next time step gives a fresh one.
  clock.advance(30_000);
  const challenge = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email: user.email, password: user.password } });
  assert.equal(challenge.statusCode, 200, challenge.body);
  const verify = await app.inject({
    method: 'POST', url: '/api/v1/auth/mfa/verify', payload: { mfaToken: challenge.json().mfaToken, code: totpCode(secret, clock.now()) },
  });
  assert.equal(verify.statusCode, 200, verify.body);
  return { accessToken: verify.json().accessToken, refreshToken: verify.json().refreshToken, totpSecret: secret };
}

export function bearer(session: Pick<Session, 'accessToken'>): Record<string, string> {
  return { authorization: `Bearer ${session.accessToken}` };
}

/** app.inject as the given session. */
export function as(app: FastifyInstance, session: Pick<Session, 'accessToken'>) {
  return (options: InjectOptions) => app.inject({ ...options, headers: { ...bearer(session), ...(options.headers ?? {}) } });
}

export function assertProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, code: string): Record<string, unknown> {
  assert.equal(res.statusCode, status, `expected ${status} ${code}, got ${res.statusCode}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  assert.equal(body.code, code, res.body);
  assert.equal(body.status, status);
  assert.equal(body.type, 'about:blank');
  assert.equal(typeof body.detail, 'string');
  assert.equal(body.requestId, res.headers['x-request-id']);
  // API.md §2: validation errors add `errors: [{path, message}]`, whichever rule refused the request.
  if (code === 'VALIDATION_FAILED') assert.ok(Array.isArray(body.errors) && body.errors.length > 0, `no errors[]: ${res.body}`);
  return body;
}
