// The agent WebSocket protocol (API.md §7), shared by the service's gateway and the reference
// agent (src/agent/). Keep it free of imports: the agent uses nothing else from src/.

export const LIVE_COMMANDS = ['eventlogs.list', 'eventlogs.get', 'eventlogs.query', 'eventlogs.record'] as const;
export type LiveCommand = (typeof LIVE_COMMANDS)[number];

export const LIVE_LEVELS = ['information', 'warning', 'error', 'critical', 'verbose'] as const;
export type LiveLevel = (typeof LIVE_LEVELS)[number];

export interface EventLogQuery {
  name: string;
  page: number;
  limit: number;
  level?: LiveLevel;
  source?: string;
  startTime?: string;
  endTime?: string;
  eventId?: number;
}

export type CommandPayload =
  | { command: 'eventlogs.list'; payload: Record<string, never> }
  | { command: 'eventlogs.get'; payload: { name: string } }
  | { command: 'eventlogs.query'; payload: EventLogQuery }
  | { command: 'eventlogs.record'; payload: { name: string; recordId: number } };

/** Server → agent. */
export type CommandMessage = { type: 'command'; id: string } & CommandPayload;

/** Agent → server. A failed result whose error is `not_found` becomes a 404. */
export interface CommandResultMessage {
  type: 'command_result';
  id: string;
  status: 'completed' | 'failed';
  result?: unknown;
  error?: string;
}

/** SPEC "Live event log descriptor". */
export interface LiveEventLogDescriptor {
  name: string;
  displayName: string;
  recordCount: number;
  maxSize: number;
  retentionDays: number;
  lastWriteTime: string;
}

/** SPEC "Live event log entry". */
export interface LiveEventLogEntry {
  recordId: number;
  timeCreated: string;
  level: LiveLevel;
  source: string;
  eventId: number;
  message: string;
  category: string;
  user: string | null;
  computer: string;
  rawXml?: string;
}

/** Results: list → {logs}; get → descriptor; query → {events, total?, hasMore}; record → entry. */
export interface EventLogQueryResult {
  events: LiveEventLogEntry[];
  total?: number;
  hasMore: boolean;
}

/** Frames larger than this close the socket (1009). */
export const MAX_FRAME_BYTES = 4 * 1024 * 1024;
