import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { HotCounter, HotHistogram } from './hot-metrics.js';

describe('hot metrics in a prom-client registry', () => {
  it('exposes cumulative buckets (a value on a bound counts in it), sum and count per label', async () => {
    const registry = new Registry();
    const histogram = new HotHistogram('h_seconds', 'help', ['route'], [0.1, 1], registry);
    for (const v of [0.05, 0.1, 0.5, 2]) histogram.labels('a').observe(v);
    histogram.labels('b').observe(1);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE h_seconds histogram');
    expect(text).toContain('h_seconds_bucket{route="a",le="0.1"} 2');
    expect(text).toContain('h_seconds_bucket{route="a",le="1"} 3');
    expect(text).toContain('h_seconds_bucket{route="a",le="+Inf"} 4');
    expect(text).toContain('h_seconds_sum{route="a"} 2.65');
    expect(text).toContain('h_seconds_count{route="a"} 4');
    expect(text).toContain('h_seconds_bucket{route="b",le="1"} 1');
  });

  it('keeps one series per label values and zeroes it in place on a reset', async () => {
    const registry = new Registry();
    const counter = new HotCounter('c_total', 'help', ['model', 'status'], registry);
    counter.labels('m', '200').value++;
    counter.labels('m', '200').value += 2;
    counter.labels('m', '500').value++;
    const text = await registry.metrics();
    expect(text).toContain('c_total{model="m",status="200"} 3');
    expect(text).toContain('c_total{model="m",status="500"} 1');
    const kept = counter.labels('m', '200');
    registry.resetMetrics();
    expect(await registry.metrics()).toContain('c_total{model="m",status="200"} 0');
    kept.value++;
    expect(await registry.metrics()).toContain('c_total{model="m",status="200"} 1');
  });
});
