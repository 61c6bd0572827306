// /devices: JWT (devices permissions) or X-API-Key (devices:read / devices:write), API.md §5-6.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import type { DevicesService } from './devices.service.js';
import * as S from './devices.schemas.js';

export function devicesRoutes(deps: { devices: DevicesService }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt', 'api_key'], permission: 'devices:read' } } as const;
  const write = { auth: { via: ['jwt', 'api_key'], permission: 'devices:write' } } as const;
  const tags = ['devices'];
  return async (app) => {

    app.get('/devices', {
      config: read,
      schema: { operationId: 'listDevices', tags, summary: 'Devices of reachable organizations (newest first)', querystring: S.DeviceListQuery, response: { 200: S.DeviceList } },
    }, (request) => deps.devices.list(callerOf(request), request.query));

    app.get('/devices/:id', {
      config: read,
      schema: { operationId: 'getDevice', tags, summary: 'One device', params: S.IdParams, response: { 200: S.Device } },
    }, (request) => deps.devices.get(callerOf(request), request.params.id));

    app.patch('/devices/:id', {
      config: write,
      schema: { operationId: 'moveDevice', tags, summary: 'Move a device to another site of its organization', params: S.IdParams, body: S.UpdateDeviceBody, response: { 200: S.Device } },
    }, (request) => deps.devices.move(callerOf(request), request.params.id, request.body.siteId, request.meta));

    app.delete('/devices/:id', {
      config: write,
      schema: { operationId: 'decommissionDevice', tags, summary: 'Decommission a device: its agent token stops working', params: S.IdParams, response: { 200: S.Success } },
    }, (request) => deps.devices.decommission(callerOf(request), request.params.id, request.meta));
  };
}
