// Stopping a server a test started (rsyslog, Prometheus): SIGTERM, then SIGKILL after 5 s.
import type { ChildProcess } from 'node:child_process';

export async function stopChild(child: ChildProcess | undefined, exited: boolean): Promise<void> {
  if (!child || exited) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(killer);
}
