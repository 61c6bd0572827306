// The agent's own log: every line is printed and kept as a SPEC "Agent diagnostic log entry" until
// it has been shipped to POST /agents/:id/logs. The buffer is bounded (oldest entries go first, and
// the loss is itself logged) so an agent cut off from the service never grows without limit.

export type DiagnosticLevel = 'debug' | 'info' | 'warn' | 'error';

export interface DiagnosticEntry {
  timestamp: string;
  level: DiagnosticLevel;
  component: string;
  message: string;
  fields?: Record<string, unknown>;
  agentVersion: string;
}

/** SPEC "Agent submissions": at most 500 entries per request. */
export const MAX_BATCH = 500;
/** The service's caps (agent-logs schemas): longer messages are cut rather than rejected. */
const MAX_MESSAGE = 10_000;
const MAX_COMPONENT = 100;

export interface AgentLogger {
  debug(component: string, message: string, fields?: Record<string, unknown>): void;
  info(component: string, message: string, fields?: Record<string, unknown>): void;
  warn(component: string, message: string, fields?: Record<string, unknown>): void;
  error(component: string, message: string, fields?: Record<string, unknown>): void;
}

export interface DiagnosticLog extends AgentLogger {
  /** Entries waiting to be shipped, oldest first. */
  pending(): number;
  /**
   * Ships up to `maxBatches` batches through `send`. An entry leaves the buffer only once `send`
   * resolves 'accepted' (stored) or 'rejected' (the service will never take it, e.g. 400);
   * 'retry' or a throw keeps it for the next call. Returns how many entries left the buffer.
   */
  ship(send: (batch: DiagnosticEntry[]) => Promise<'accepted' | 'rejected' | 'retry'>, maxBatches?: number): Promise<number>;
}

export function createDiagnosticLog(options: {
  agentVersion: string;
  /** Where printed lines go (default: stdout). */
  print?: (line: string) => void;
  /** Print debug lines too (they are always buffered). */
  verbose?: boolean;
  maxBuffered?: number;
  now?: () => number;
}): DiagnosticLog {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const maxBuffered = options.maxBuffered ?? 10_000;
  const now = options.now ?? Date.now;
  let buffer: DiagnosticEntry[] = [];
  let dropped = 0;
  let shipping: Promise<number> | null = null;

  const push = (entry: DiagnosticEntry) => {
    buffer.push(entry);
    if (buffer.length > maxBuffered) {
      dropped += buffer.length - maxBuffered;
      buffer = buffer.slice(buffer.length - maxBuffered);
    }
  };

  const write = (level: DiagnosticLevel, component: string, message: string, fields?: Record<string, unknown>) => {
    const entry: DiagnosticEntry = {
      timestamp: new Date(now()).toISOString(),
      level,
      component: component.slice(0, MAX_COMPONENT),
      message: message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message,
      agentVersion: options.agentVersion,
    };
    if (fields && Object.keys(fields).length > 0) entry.fields = fields;
    if (level !== 'debug' || options.verbose) {
      print(`${entry.timestamp} ${level.toUpperCase().padEnd(5)} [${component}] ${message}${entry.fields ? ` ${safeJson(entry.fields)}` : ''}`);
    }
    push(entry);
  };

  const shipBatches = async (send: Parameters<DiagnosticLog['ship']>[0], maxBatches: number): Promise<number> => {
    let removed = 0;
    for (let i = 0; i < maxBatches && buffer.length > 0; i++) {
      if (dropped > 0) {
        // The notice itself takes a place in a full buffer: count the entry it pushes out.
        const lost = dropped + (buffer.length >= maxBuffered ? 1 : 0);
        write('warn', 'logs', `log buffer full: ${lost} older entries were dropped before they could be shipped`, { dropped: lost });
        dropped = 0;
      }
      const batch = buffer.slice(0, MAX_BATCH);
      let outcome: 'accepted' | 'rejected' | 'retry';
      try {
        outcome = await send(batch);
      } catch {
        outcome = 'retry';
      }
      if (outcome === 'retry') break;
      // Entries logged while the request was in flight were appended; entries dropped meanwhile
      // came off the front, so remove only what is still there of this batch.
      const stillThere = buffer.indexOf(batch[batch.length - 1]!) + 1;
      buffer = buffer.slice(Math.max(0, stillThere));
      removed += batch.length;
      if (outcome === 'rejected') write('warn', 'logs', `the service refused ${batch.length} log entries; they were discarded`);
    }
    return removed;
  };

  return {
    debug: (c, m, f) => write('debug', c, m, f),
    info: (c, m, f) => write('info', c, m, f),
    warn: (c, m, f) => write('warn', c, m, f),
    error: (c, m, f) => write('error', c, m, f),
    pending: () => buffer.length,
    // One shipment at a time: a slow request must not let a second one send the same entries.
    ship: async (send, maxBatches = 1) => {
      while (shipping) await shipping.catch(() => 0);
      shipping = shipBatches(send, maxBatches);
      try {
        return await shipping;
      } finally {
        shipping = null;
      }
    },
  };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return '[unserialisable fields]';
  }
}
