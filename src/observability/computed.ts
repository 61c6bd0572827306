// A metric whose samples are computed when Prometheus scrapes, registered with prom-client's
// registry, which formats it like its own: the registry asks a metric only for its name and get().
// For series prom-client cannot hold (buckets counted elsewhere), and for gauges that must be
// left out of a scrape rather than read 0 when their source cannot answer.
import type { Registry } from 'prom-client';

export interface Sample {
  labels: Record<string, string>;
  value: number;
  /** For a histogram's _bucket, _sum and _count lines. */
  metricName?: string;
}

export function registerComputed(
  registry: Registry,
  metric: { name: string; help: string; type: 'counter' | 'gauge' | 'histogram'; samples: () => Sample[] | Promise<Sample[]> },
): void {
  const { name, help, type, samples } = metric;
  const aggregator = 'sum' as const;
  const computed = { name, help, type, aggregator, get: async () => ({ name, help, type, aggregator, values: await samples() }) };
  registry.registerMetric(computed as unknown as Parameters<Registry['registerMetric']>[0]);
}
