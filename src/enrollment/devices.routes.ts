// /devices: JWT (devices permissions) or X-API-Key (devices:read / devices:write), API.md §5-6.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { callerOf } from '../http/auth.js';
import { requestMeta } from '../http/client-ip.js';
import type { DevicesService } from './devices.service.js';
import * as S from './enrollment.schemas.js';

export function devicesRoutes(deps: { devices: DevicesService; trustProxyHeaders: boolean }): FastifyPluginAsyncTypebox {
  const read = { auth: { via: ['jwt', 'api_key'], permission: 'devices:read' } } as const;
  const write = { auth: { via: ['jwt', 'api_key'], permission: 'devices:write' } } as const;
  const tags = ['devices'];
  return async (app) => {
    const meta = (request: Parameters<typeof requestMeta>[0]) => requestMeta(request, deps.trustProxyHeaders);

    app.get('/devices/', {
      config: read,
      schema: { tags, summary: 'Devices of reachable organizations (newest first)', querystring: S.DeviceListQuery, response: { 200: S.DeviceList } },
    }, (request) => deps.devices.list(callerOf(request), request.query));

    app.get('/devices/:id', {
      config: read,
      schema: { tags, summary: 'One device', params: S.IdParams, response: { 200: S.Device } },
    }, (request) => deps.devices.get(callerOf(request), request.params.id));

    app.patch('/devices/:id', {
      config: write,
      schema: { tags, summary: 'Move a device to another site of its organization', params: S.IdParams, body: S.UpdateDeviceBody, response: { 200: S.Device } },
    }, (request) => deps.devices.move(callerOf(request), request.params.id, request.body.siteId, meta(request)));

    app.delete('/devices/:id', {
      config: write,
      schema: { tags, summary: 'Decommission a device: its agent token stops working', params: S.IdParams, response: { 200: S.Success } },
    }, (request) => deps.devices.decommission(callerOf(request), request.params.id, meta(request)));
  };
}
