/**
 * Live metrics of a run, pushed every second with Prometheus remote write (`--remote-write URL`),
 * as k6's `experimental-prometheus-rw` output does: a load generator on a CI runner or in a pod is
 * short-lived and rarely reachable, so it pushes rather than waiting to be scraped, and every
 * store Grafana reads as Prometheus (Prometheus with its receiver on, Mimir, Thanos, Cortex,
 * VictoriaMetrics, Grafana Cloud) takes remote write. Each metric of load/metrics.ts is a gauge
 * `conform_load_<name>` (a distribution's statistics `conform_load_latency_p99_ms`), labelled with
 * the mode, the run and the `--label`s; the last push carries the report's own figures. The
 * encoding (protobuf, snappy) is prometheus-remote-write's. A push that fails is counted and
 * reported, never fatal: the run's own figures do not depend on it.
 */
import { pushTimeseries } from 'prometheus-remote-write';
import { LIVE_METRICS } from '../options.ts';

/** Flat metric values by threshold name (`latency.p99`), null when not measured yet. */
export type LiveValues = Record<string, number | null>;

/** The Prometheus name of a metric's threshold name: `latency.p99` → `conform_load_latency_p99_ms`. */
export function promName(name: string, unit: string): string {
  const base = `conform_load_${name.replace(/[^a-zA-Z0-9_]/g, '_')}`;
  return unit === 'ms' ? `${base}_ms` : base;
}

/** What a pusher was told and did. */
export interface LiveStatus {
  url: string;
  run: string;
  pushes: number;
  failures: number;
  lastError: string | null;
}

/** Pushes `sample()` every second to `url` until stopped; `stop(final)` pushes the final figures last. */
export class LivePusher {
  readonly status: LiveStatus;
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    url: string,
    private readonly labels: Record<string, string>,
    private readonly units: (name: string) => string,
    private readonly sample: () => LiveValues,
  ) {
    this.status = { url, run: labels.run ?? '', pushes: 0, failures: 0, lastError: null };
  }

  start(): void {
    this.timer = setInterval(() => {
      this.inFlight = this.inFlight.then(() => this.push(this.sample()));
    }, LIVE_METRICS.everyMs);
    this.timer.unref();
  }

  /** Stops the timer and pushes `final` (the report's figures) once every push before it is done. */
  async stop(final: LiveValues): Promise<LiveStatus> {
    clearInterval(this.timer);
    await this.inFlight;
    await this.push(final);
    return this.status;
  }

  private async push(values: LiveValues): Promise<void> {
    const now = Date.now();
    // Labels in name order, as remote write asks; `__name__` sorts first.
    const sorted = Object.fromEntries(Object.entries(this.labels).sort(([a], [b]) => (a < b ? -1 : 1)));
    const series = Object.entries(values)
      .filter((e): e is [string, number] => e[1] !== null && Number.isFinite(e[1]))
      .map(([name, value]) => ({
        labels: { __name__: promName(name, this.units(name)), ...sorted },
        samples: [{ value, timestamp: now }],
      }));
    // Nothing measured yet (the target still starting): nothing to send.
    if (!series.length) return;
    try {
      const r = await pushTimeseries(series, {
        url: this.status.url,
        headers: {
          'Content-Encoding': 'snappy',
          'X-Prometheus-Remote-Write-Version': '0.1.0',
          'User-Agent': 'conform',
        },
        fetch: (url, init) =>
          fetch(url, {
            method: init?.method ?? 'POST',
            headers: init?.headers,
            body: init?.body as unknown as Uint8Array,
            redirect: 'manual',
            signal: AbortSignal.timeout(LIVE_METRICS.pushTimeoutMs),
          }),
      });
      if (r.status >= 200 && r.status < 300) this.status.pushes++;
      else this.failed(`HTTP ${r.status} ${r.errorMessage ?? r.statusText}`.trim());
    } catch (err) {
      this.failed((err as Error).message);
    }
  }

  private failed(why: string): void {
    this.status.failures++;
    this.status.lastError = why;
  }
}
