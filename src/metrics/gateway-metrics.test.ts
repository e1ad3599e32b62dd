import { describe, expect, it } from 'vitest';
import { GatewayMetrics } from './gateway-metrics.js';
import { seriesValue as valueOf } from '../../test/support/series-value.js';


describe('GatewayMetrics: the accounting', () => {
  it('shows the settlement writer\'s commits, failures and backlog, and the store\'s write pauses', async () => {
    const metrics = new GatewayMetrics(() => []);
    let backlog = 0;
    metrics.watchBacklog(() => backlog);
    metrics.settlements.committed(27, 0.4);
    metrics.settlements.committed(1, 3);
    metrics.settlements.failed();
    metrics.storeWritePaused(6);
    backlog = 12;
    const { body } = await metrics.scrape();
    expect(valueOf(body, 'tollgate_settlements_committed_total')).toBe(28);
    expect(valueOf(body, 'tollgate_settlement_commit_seconds_count')).toBe(2);
    expect(valueOf(body, 'tollgate_settlement_commit_seconds_sum')).toBeCloseTo(0.0034, 6);
    expect(valueOf(body, 'tollgate_settlement_commit_seconds_bucket{le="0.0005"}')).toBe(1);
    expect(valueOf(body, 'tollgate_settlement_commit_failures_total')).toBe(1);
    // Read when scraped, not when it changed.
    expect(valueOf(body, 'tollgate_settlement_backlog')).toBe(12);
    expect(valueOf(body, 'tollgate_store_write_pause_seconds_count')).toBe(1);
    expect(valueOf(body, 'tollgate_store_write_pause_seconds_bucket{le="0.005"}')).toBe(0);
    expect(valueOf(body, 'tollgate_store_write_pause_seconds_bucket{le="0.01"}')).toBe(1);
  });
});
