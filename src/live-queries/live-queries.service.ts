// Live event-log queries (SPEC "Live event log queries", API.md §7): the device is checked against
// the caller's reach before anything is sent to its agent, and every query is audited
// (`device.eventlogs.query`) with its outcome.
import type { Database, Queryable } from '../db/database.js';
import { withTenant } from '../db/tenant-scope.js';
import { AppError, reversedRange } from '../errors.js';
import type { Caller } from '../http/auth.js';
import type { RequestMeta } from '../http/request-meta.js';
import { pageOf } from '../http/pagination.js';
import { callerEvent, type RecordAudit } from '../audit/recorder.js';
import type { AgentGateway } from './gateway.js';
import { liveOutcome, type LiveOutcome } from './outcomes.js';
import type { CommandPayload, EventLogQuery, EventLogQueryResult, LiveEventLogDescriptor, LiveEventLogEntry, LiveLevel } from './protocol.js';

export const LIVE_MAX_LIMIT = 500;

export interface EventsFilter {
  page?: number;
  limit?: number;
  level?: LiveLevel;
  source?: string;
  startTime?: string;
  endTime?: string;
  eventId?: number;
}

export function createLiveQueriesService(deps: {
  db: Database;
  gateway: AgentGateway;
  recordAudit: RecordAudit;
  deviceInReach(tx: Queryable, caller: Caller, id: string): Promise<{ id: string; orgId: string }>;
  /** Each query sent to an agent: how it ended and how long the agent took (metrics). */
  onQuery?: (outcome: LiveOutcome, seconds: number) => void;
}) {
  async function run(caller: Caller, deviceId: string, command: CommandPayload, meta: RequestMeta): Promise<unknown> {
    // The reach check and the audit entry are two transactions: none may stay open while the agent answers.
    const device = await withTenant(deps.db, caller.tenant, (tx) => deps.deviceInReach(tx, caller, deviceId));
    let outcome: { result: unknown } | { error: AppError };
    const started = performance.now();
    try {
      outcome = { result: await deps.gateway.execute(device.id, command) };
      deps.onQuery?.('ok', (performance.now() - started) / 1000);
    } catch (err) {
      deps.onQuery?.(liveOutcome(err), (performance.now() - started) / 1000);
      if (!(err instanceof AppError)) throw err;
      outcome = { error: err };
    }
    const failed = 'error' in outcome ? outcome.error : null;
    await withTenant(deps.db, caller.tenant, (tx) =>
      deps.recordAudit(tx, callerEvent(caller, meta, {
        orgId: device.orgId,
        action: 'device.eventlogs.query',
        resource: { type: 'device', id: device.id, name: null },
        details: { command: command.command, ...command.payload, ...(failed ? { errorCode: failed.code } : {}) },
        result: failed ? 'failure' : 'success',
        errorMessage: failed?.message ?? null,
      })),
    );
    if (failed) throw failed;
    return (outcome as { result: unknown }).result;
  }

  return {
    async listLogs(caller: Caller, deviceId: string, meta: RequestMeta) {
      const result = (await run(caller, deviceId, { command: 'eventlogs.list', payload: {} }, meta)) as { logs: LiveEventLogDescriptor[] };
      return { data: result.logs };
    },

    async getLog(caller: Caller, deviceId: string, name: string, meta: RequestMeta) {
      return { data: (await run(caller, deviceId, { command: 'eventlogs.get', payload: { name } }, meta)) as LiveEventLogDescriptor };
    },

    async queryEvents(caller: Caller, deviceId: string, name: string, filter: EventsFilter, meta: RequestMeta) {
      const { page, limit } = pageOf(filter, LIVE_MAX_LIMIT);
      if (filter.startTime && filter.endTime && Date.parse(filter.startTime) > Date.parse(filter.endTime)) {
        throw reversedRange('startTime', 'endTime', [{ path: 'query.startTime', message: 'after endTime' }]);
      }
      const payload: EventLogQuery = { name, page, limit };
      for (const key of ['level', 'source', 'startTime', 'endTime', 'eventId'] as const) {
        if (filter[key] !== undefined) (payload as unknown as Record<string, unknown>)[key] = filter[key];
      }
      const result = (await run(caller, deviceId, { command: 'eventlogs.query', payload }, meta)) as EventLogQueryResult;
      return { data: result.events, pagination: { page, limit, total: result.total ?? null, hasMore: result.hasMore } };
    },

    async getRecord(caller: Caller, deviceId: string, name: string, recordId: number, meta: RequestMeta) {
      return { data: (await run(caller, deviceId, { command: 'eventlogs.record', payload: { name, recordId } }, meta)) as LiveEventLogEntry };
    },
  };
}

export type LiveQueriesService = ReturnType<typeof createLiveQueriesService>;
