// The device as the API returns it, and the statuses its list can be filtered by.
import type { Ok } from '../../api/types';

export type Device = Ok<'/api/v1/devices/{id}', 'get'>;

export const DEVICE_STATUSES = ['online', 'offline'] as const satisfies readonly Device['status'][];
