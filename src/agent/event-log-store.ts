// The live-query operations over a set of event logs (API.md §7, SPEC "Live event log queries"):
// pure, no I/O, so they are tested without a socket. Returns null where the protocol answers
// `not_found`; payload validation is the command handler's job.
import type { EventLogQuery, EventLogQueryResult, LiveEventLogDescriptor, LiveEventLogEntry } from '../live-queries/protocol.js';
import type { SampleEventLog } from './sample-event-log.js';

export interface EventLogStore {
  list(): LiveEventLogDescriptor[];
  /** Log names match case-insensitively. */
  get(name: string): LiveEventLogDescriptor | null;
  /** Newest first, filtered, then paged (page from 1). null when the log does not exist. */
  query(query: EventLogQuery): EventLogQueryResult | null;
  record(name: string, recordId: number): LiveEventLogEntry | null;
}

interface IndexedLog {
  descriptor: LiveEventLogDescriptor;
  /** Ascending by recordId. */
  entries: LiveEventLogEntry[];
  /** Parsed once: filters compare numbers, not strings with possibly different offsets. */
  times: number[];
  byRecordId: Map<number, LiveEventLogEntry>;
}

export function createEventLogStore(logs: SampleEventLog[]): EventLogStore {
  const byName = new Map<string, IndexedLog>();
  for (const log of logs) {
    byName.set(log.descriptor.name.toLowerCase(), {
      descriptor: log.descriptor,
      entries: log.entries,
      times: log.entries.map((e) => Date.parse(e.timeCreated)),
      byRecordId: new Map(log.entries.map((e) => [e.recordId, e])),
    });
  }
  const find = (name: string) => byName.get(name.toLowerCase()) ?? null;

  return {
    list: () => [...byName.values()].map((log) => ({ ...log.descriptor })),

    get: (name) => {
      const log = find(name);
      return log ? { ...log.descriptor } : null;
    },

    query: (q) => {
      const log = find(q.name);
      if (!log) return null;
      const source = q.source?.toLowerCase();
      const start = q.startTime === undefined ? -Infinity : Date.parse(q.startTime);
      const end = q.endTime === undefined ? Infinity : Date.parse(q.endTime);
      const matches = (entry: LiveEventLogEntry, time: number) =>
        (q.level === undefined || entry.level === q.level) &&
        (source === undefined || entry.source.toLowerCase() === source) &&
        (q.eventId === undefined || entry.eventId === q.eventId) &&
        time >= start &&
        time <= end;
      const skip = (q.page - 1) * q.limit;
      const events: LiveEventLogEntry[] = [];
      let total = 0;
      // Walk newest to oldest, counting every match but keeping only the requested page.
      for (let i = log.entries.length - 1; i >= 0; i--) {
        const entry = log.entries[i]!;
        if (!matches(entry, log.times[i]!)) continue;
        if (total >= skip && events.length < q.limit) events.push(entry);
        total++;
      }
      return { events, total, hasMore: skip + events.length < total };
    },

    record: (name, recordId) => find(name)?.byRecordId.get(recordId) ?? null,
  };
}
