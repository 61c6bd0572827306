// Where the service's log lines go by default: stdout, written asynchronously by sonic-boom
// (pino's own destination), the lines of one event-loop turn handed over as one string.
// A synchronous write per access-log line cost more than the rest of a cached request; sonic-boom
// fed line by line measures its whole pending buffer again for every line (8% of a cached request
// at saturation); a worker-thread transport costs an encoded copy per line and a thread beside the
// event loop. Lines are never dropped: what waits for the turn's end is written out on exit.
import { pino, type DestinationStream } from 'pino';

export interface LogDestination extends DestinationStream {
  /** pino's `logger.flush`: writes out what waits, then calls back once sonic-boom has written it. */
  flush(callback?: (err?: Error) => void): void;
}

let shared: LogDestination | null = null;

/** stdout is one per process, and so is its destination, whatever number of servers log to it. */
export function stdoutLogDestination(): LogDestination {
  return (shared ??= createStdoutDestination());
}

function createStdoutDestination(): LogDestination {
  let lines: string[] = [];
  let scheduled = false;
  const handOver = () => {
    scheduled = false;
    if (lines.length === 0) return;
    const batch = lines.join('');
    lines = [];
    try {
      out.write(batch);
    } catch {
      // sonic-boom throws once destroyed (stdout closed): nothing can be written any more, and a
      // log line must not end the process from a timer.
    }
  };
  // Ahead of every other exit listener: sonic-boom writes its buffer out synchronously in its own.
  process.prependListener('exit', handOver);
  const out = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  return {
    write(line: string) {
      lines.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(handOver);
      }
    },
    flush(callback) {
      handOver();
      out.flush(callback);
    },
  };
}
