// HTTP request metrics on the request path: a count and a duration histogram per method, route
// template and status. prom-client's own observe() costs 1.2-1.5 µs per request here (a labels
// object hashed, then looked up in an object per metric), close to the whole 2% budget of a cached
// /auth/me; here a request costs one Map lookup and a bucket search, and prom-client formats the
// series only when scraped.
import type { Registry } from 'prom-client';
import { registerComputed, type Sample } from './computed.js';

/** Seconds; a cached read answers in under a millisecond, so the first buckets are finer than prom-client's. */
export const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LE = [...REQUEST_BUCKETS.map(String), '+Inf'];

type Labels = { method: string; route: string; status: string };

interface Series {
  labels: Labels;
  code: number;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  buckets: Float64Array;
}

export interface RequestMetrics {
  /** One request answered: its route template (undefined when no route matched), status and time. */
  record(method: string, route: string | undefined, status: number, elapsedMs: number): void;
}

export function createRequestMetrics(registry: Registry): RequestMetrics {
  // By route template, then the few method and status pairs each route sees: no key is built per
  // request (the template and the method are strings the router and the parser already hold).
  const byRoute = new Map<string, Series[]>();
  const all: Series[] = [];

  registerComputed(registry, {
    name: 'dms_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    type: 'counter',
    samples: () => all.map((s) => ({ labels: s.labels, value: s.count })),
  });
  registerComputed(registry, {
    name: 'dms_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its answer, by method, route template and status',
    type: 'histogram',
    samples: () => {
      const samples: Sample[] = [];
      for (const s of all) {
        let cumulative = 0;
        for (let i = 0; i < LE.length; i++) {
          cumulative += s.buckets[i]!;
          samples.push({ labels: { ...s.labels, le: LE[i]! }, value: cumulative, metricName: 'dms_http_request_duration_seconds_bucket' });
        }
        samples.push({ labels: s.labels, value: s.sum, metricName: 'dms_http_request_duration_seconds_sum' });
        samples.push({ labels: s.labels, value: s.count, metricName: 'dms_http_request_duration_seconds_count' });
      }
      return samples;
    },
  });

  return {
    record(method, route, status, elapsedMs) {
      const template = route ?? 'unmatched';
      let list = byRoute.get(template);
      if (list === undefined) byRoute.set(template, (list = []));
      let s: Series | undefined;
      for (let i = 0; i < list.length; i++) {
        const candidate = list[i]!;
        if (candidate.code === status && candidate.labels.method === method) {
          s = candidate;
          break;
        }
      }
      if (s === undefined) {
        s = { labels: { method, route: template, status: String(status) }, code: status, count: 0, sum: 0, buckets: new Float64Array(LE.length) };
        list.push(s);
        all.push(s);
      }
      const seconds = elapsedMs / 1000;
      s.count++;
      s.sum += seconds;
      let i = 0;
      while (i < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[i]!) i++;
      s.buckets[i] = s.buckets[i]! + 1;
    },
  };
}
