// /users: user management inside the caller's reach.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { UsersService } from './users.service.js';
import * as S from './schemas.js';

export function usersRoutes(deps: { users: UsersService }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt'], permission: 'users:read' } } as const;
  // API.md §3: user writes need an MFA-verified session, as key management does (a password-only
  // admin must not mint an admin that then enrols MFA and holds keys).
  const write = { auth: { via: ['jwt'], permission: 'users:write', mfa: true } } as const;
  return async (app) => {
    app.get('/users', {
      config: read,
      schema: { operationId: 'listUsers', tags: ['users'], summary: 'Users within reach', querystring: S.ListUsersQuery, response: { 200: S.UserList } },
    }, (request) => deps.users.list(callerOf(request), request.query));

    app.post('/users', {
      config: write,
      schema: { operationId: 'createUser', tags: ['users'], summary: 'Create a user', body: S.CreateUserBody, response: { 201: S.User } },
    }, async (request, reply) => {
      reply.status(201);
      return deps.users.create(callerOf(request), request.body, request.meta);
    });

    app.get('/users/:id', {
      config: read,
      schema: { operationId: 'getUser', tags: ['users'], summary: 'One user', params: S.IdParams, response: { 200: S.User } },
    }, (request) => deps.users.get(callerOf(request), request.params.id));

    app.patch('/users/:id', {
      config: write,
      schema: { operationId: 'updateUser', tags: ['users'], summary: 'Change a user', params: S.IdParams, body: S.UpdateUserBody, response: { 200: S.User } },
    }, (request) => deps.users.update(callerOf(request), request.params.id, request.body, request.meta));

    app.delete('/users/:id', {
      config: write,
      schema: { operationId: 'deleteUser', tags: ['users'], summary: 'Delete a user (their sessions end at once)', params: S.IdParams, response: { 200: S.Success } },
    }, (request) => deps.users.remove(callerOf(request), request.params.id, request.meta));
  };
}
