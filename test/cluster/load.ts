// A steady stream of API-key requests through nginx for the kill test: each worker alternates an
// audited write (PATCH /devices/:id, moving its own device between two sites: no two workers wait
// on one row lock) and a read (GET /devices/:id), and every request's start, end and outcome is
// kept, so the test can say which failed and whether they were in flight when the instance died.
export interface LoadResult {
  kind: 'write' | 'read';
  start: number;
  end: number;
  /** HTTP status, or 0 when the request itself failed (connection reset, timeout). */
  status: number;
}

export async function runLoad(opts: {
  base: string;
  key: string;
  devices: { id: string }[];
  sites: { id: string }[];
  workers: number;
  durationMs: number;
  /** Called every 20 ms with the time since the start; the test kills an instance from here. */
  onTick(elapsedMs: number): Promise<void>;
}): Promise<LoadResult[]> {
  const results: LoadResult[] = [];
  const started = Date.now();
  const stopAt = started + opts.durationMs;
  const ticker = setInterval(() => void opts.onTick(Date.now() - started), 20);

  async function one(kind: LoadResult['kind'], device: string, site: string): Promise<void> {
    const start = Date.now();
    let status = 0;
    try {
      const res = await fetch(`${opts.base}/api/v1/devices/${device}`, kind === 'write'
        ? { method: 'PATCH', headers: { 'x-api-key': opts.key, 'content-type': 'application/json' }, body: JSON.stringify({ siteId: site }), signal: AbortSignal.timeout(15_000) }
        : { headers: { 'x-api-key': opts.key }, signal: AbortSignal.timeout(15_000) });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = 0;
    }
    results.push({ kind, start, end: Date.now(), status });
  }

  await Promise.all(Array.from({ length: opts.workers }, async (_, w) => {
    const device = opts.devices[w % opts.devices.length]!.id;
    for (let n = 0; Date.now() < stopAt; n++) {
      await one('write', device, opts.sites[n % opts.sites.length]!.id);
      await one('read', device, '');
    }
  }));
  clearInterval(ticker);
  return results;
}

interface Tally { ok: number; failed: number }

export function summarise(results: LoadResult[], killedAt: number, diedAt: number) {
  const ok = (r: LoadResult) => r.status >= 200 && r.status < 300;
  const tally = (kind: LoadResult['kind']): Tally => ({
    ok: results.filter((r) => r.kind === kind && ok(r)).length,
    failed: results.filter((r) => r.kind === kind && !ok(r)).length,
  });
  return {
    total: results.length,
    writes: tally('write'),
    reads: tally('read'),
    // In flight: sent before the process was gone, and not answered before the signal.
    failedNotInFlight: results.filter((r) => !ok(r) && !(r.start <= diedAt && r.end >= killedAt)),
    afterKill: { ok: results.filter((r) => ok(r) && r.start > diedAt).length },
  };
}
