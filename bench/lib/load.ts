/** One closed-loop load run with autocannon (as fast as the target goes), reduced to the figures the report needs. */
import autocannon from 'autocannon';

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationSeconds: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** How many answers of each status outside 2xx, so that a failed run says what failed. */
  statuses: Record<string, number>;
}

/** The statuses outside 2xx and their counts as a short text for a log line, e.g. `503: 4, 504: 1`. */
export function describeStatuses(statuses: Record<string, number>): string {
  return Object.entries(statuses).map(([status, count]) => `${status}: ${count}`).join(', ');
}

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...spec.headers },
        body: spec.body,
        connections: spec.connections,
        duration: spec.durationSeconds,
        timeout: 30,
      },
      (err, result) => {
        if (err) return reject(err instanceof Error ? err : new Error(String(err)));
        resolve({
          requests: result.requests.total,
          rps: result.requests.average,
          p50: result.latency.p50,
          p90: result.latency.p90,
          p99: result.latency.p99,
          errors: result.errors + result.timeouts,
          non2xx: result.non2xx,
          statuses: Object.fromEntries(
            Object.entries(result.statusCodeStats ?? {})
              .filter(([status]) => !status.startsWith('2'))
              .map(([status, stats]) => [status, stats.count ?? 0]),
          ),
        });
      },
    );
    instance.on('error', reject);
  });
}
