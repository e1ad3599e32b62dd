/**
 * Counters and histograms updated on every request, registered in a prom-client registry like any
 * other metric. prom-client hashes a series' labels on every inc() and observe(), even through a
 * labelled child, which cost several microseconds per request on the hot path; here a series is
 * looked up once by its label values and updated with a few additions, and the text is produced
 * only when scraped (prom-client calls get() and formats the values as for its own metrics).
 */
import type { Registry } from 'prom-client';

type Labels = Record<string, string>;

interface MetricValue {
  value: number;
  labels: Labels;
  metricName?: string;
}

interface MetricData {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: MetricValue[];
  aggregator: 'sum';
}

/** The part of prom-client's metric interface its Registry uses to scrape and reset. */
abstract class HotMetric<Series> {
  private readonly series = new Map<string, { labels: Labels; series: Series }>();
  readonly aggregator = 'sum';

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  protected abstract create(): Series;
  protected abstract valuesOf(series: Series, labels: Labels): MetricValue[];
  protected abstract zero(series: Series): void;

  /** The series for these label values (in labelNames order), created on first use. */
  protected seriesFor(values: readonly string[]): Series {
    const key = values.length === 1 ? (values[0] as string) : values.join('\u0000');
    let entry = this.series.get(key);
    if (entry === undefined) {
      const labels: Labels = {};
      this.labelNames.forEach((name, i) => (labels[name] = values[i] as string));
      entry = { labels, series: this.create() };
      this.series.set(key, entry);
    }
    return entry.series;
  }

  get(): Promise<MetricData> {
    const values: MetricValue[] = [];
    for (const { labels, series } of this.series.values()) values.push(...this.valuesOf(series, labels));
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  /** Zeroes every series in place: callers keep the series they looked up. */
  reset(): void {
    for (const { series } of this.series.values()) this.zero(series);
  }
}

export class HotCounter extends HotMetric<{ value: number }> {
  constructor(name: string, help: string, labelNames: readonly string[], registry: Registry) {
    super(name, help, 'counter', labelNames, registry);
  }

  /** The counter of these label values, to keep and increment. */
  labels(...values: string[]): { value: number } {
    return this.seriesFor(values);
  }

  protected create(): { value: number } {
    return { value: 0 };
  }

  protected valuesOf(series: { value: number }, labels: Labels): MetricValue[] {
    return [{ value: series.value, labels }];
  }

  protected zero(series: { value: number }): void {
    series.value = 0;
  }
}

export class HistogramSeries {
  /** Observations per bucket (not cumulative); the last one is above every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (this.counts[i] as number)++;
    this.sum += value;
    this.count++;
  }
}

export class HotHistogram extends HotMetric<HistogramSeries> {
  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, 'histogram', labelNames, registry);
  }

  /** The series of these label values, to keep and observe into. */
  labels(...values: string[]): HistogramSeries {
    return this.seriesFor(values);
  }

  protected create(): HistogramSeries {
    return new HistogramSeries(this.bounds);
  }

  protected valuesOf(series: HistogramSeries, labels: Labels): MetricValue[] {
    const out: MetricValue[] = [];
    let cumulative = 0;
    this.bounds.forEach((bound, i) => {
      cumulative += series.counts[i] as number;
      out.push({ value: cumulative, labels: { ...labels, le: String(bound) }, metricName: `${this.name}_bucket` });
    });
    out.push({ value: series.count, labels: { ...labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
    out.push({ value: series.sum, labels, metricName: `${this.name}_sum` });
    out.push({ value: series.count, labels, metricName: `${this.name}_count` });
    return out;
  }

  protected zero(series: HistogramSeries): void {
    series.counts.fill(0);
    series.sum = 0;
    series.count = 0;
  }
}
