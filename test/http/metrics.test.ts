/**
 * GET /metrics through a listening gateway: the Prometheus series the operator scrapes (requests by
 * model, route, status and error type; overhead and upstream latency; route health; limiter
 * rejections; credits charged; the accounting's writes to the store), and the admin token guarding them when one is configured.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway-harness.js';
import { seriesValue as valueOf } from '../support/series-value.js';

let gw: RunningGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

const ADMIN_TOKEN = 'metrics-test-admin-token-0123456789';

function start(adminToken?: string) {
  return startGateway({
    config: {
      ...(adminToken ? { server: { admin_token: adminToken } } : {}),
      providers: [
        { id: 'mock', kind: 'mock' },
        { id: 'broken', kind: 'mock', mock: { fail_status: 500 } },
      ],
      models: [
        { id: 'm', capabilities: ['chat', 'streaming'], context_window: 4096, price: { input_per_million_tokens: 1_000_000, output_per_million_tokens: 1_000_000 }, routes: [{ provider: 'mock', model: 'u' }] },
        { id: 'm-broken', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'broken', model: 'u' }] },
      ],
      tiers: { standard: { models: ['*'], endpoints: ['*'], limits: { requests_per_minute: 4 } } },
    },
    credits: 1_000_000,
  });
}

const chat = (g: RunningGateway, model: string, stream = false) =>
  fetch(`${g.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${g.keys.main}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there' }], stream }),
  }).then(async (res) => {
    await res.text();
    return res.status;
  });


describe('GET /metrics', () => {
  it('counts requests by model, route, status and error type, with latency, route health, rejections and credits', async () => {
    gw = await start();
    expect(await chat(gw, 'm')).toBe(200);
    expect(await chat(gw, 'm', true)).toBe(200);
    expect(await chat(gw, 'm-broken')).toBe(502);
    expect(await chat(gw, 'm')).toBe(200);
    expect(await chat(gw, 'm')).toBe(429);
    // Names that are no model of the catalogue share one series instead of making one each.
    expect(await chat(gw, 'no-such-model-1')).toBe(404);
    expect(await chat(gw, 'no-such-model-2')).toBe(404);

    const res = await fetch(`${gw.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const text = await res.text();
    expect(valueOf(text, 'tollgate_requests_total{model="m",route="mock/u",status="200",error_type=""}')).toBe(3);
    expect(valueOf(text, 'tollgate_requests_total{model="m-broken",route="broken/u",status="502",error_type="provider_error"}')).toBe(1);
    expect(valueOf(text, 'tollgate_requests_total{model="m",route="",status="429",error_type="rate_limit_error"}')).toBe(1);
    expect(valueOf(text, 'tollgate_rate_limit_rejections_total{code="requests_per_minute_exceeded"}')).toBe(1);
    expect(valueOf(text, 'tollgate_requests_total{model="unknown",route="",status="404",error_type="not_found_error"}')).toBe(2);
    expect(text).not.toContain('no-such-model');
    expect(valueOf(text, 'tollgate_gateway_overhead_seconds_count')).toBe(3);
    // Measured from each request's arrival: what the gateway adds can never be negative.
    expect(valueOf(text, 'tollgate_gateway_overhead_seconds_sum')).toBeGreaterThanOrEqual(0);
    expect(valueOf(text, 'tollgate_upstream_first_byte_seconds_count{route="mock/u"}')).toBe(3);
    expect(valueOf(text, 'tollgate_upstream_first_token_seconds_count{route="mock/u"}')).toBe(1);
    expect(valueOf(text, 'tollgate_route_circuit_state{route="mock/u"}')).toBe(0);
    expect(valueOf(text, 'tollgate_route_available{route="broken/u"}')).toBe(1);
    expect(valueOf(text, 'tollgate_route_in_flight{route="mock/u"}')).toBe(0);
    expect(valueOf(text, 'tollgate_credits_charged_total{model="m"}')).toBeGreaterThan(0);
    // The three charged answers waited for their commits; the failed requests' usage records may still wait.
    expect(valueOf(text, 'tollgate_settlements_committed_total')).toBeGreaterThanOrEqual(3);
    expect(valueOf(text, 'tollgate_settlement_commit_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(valueOf(text, 'tollgate_settlement_commit_failures_total')).toBe(0);
    expect(valueOf(text, 'tollgate_settlement_backlog')).toBeGreaterThanOrEqual(0);
    // An in-memory database has no write-ahead log to start over.
    expect(valueOf(text, 'tollgate_store_write_pause_seconds_count')).toBe(0);
    expect(text).toContain('tollgate_process_cpu_seconds_total');
    expect(text).not.toContain('sk-');
  });

  it('shows an open circuit', async () => {
    gw = await start();
    for (let i = 0; i < 4; i++) await chat(gw, 'm-broken');
    // The default breaker opens after five failures in a row; four leave it closed.
    let text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(valueOf(text, 'tollgate_route_circuit_state{route="broken/u"}')).toBe(0);
    await gw.close();
    gw = await startGateway({
      config: {
        providers: [{ id: 'broken', kind: 'mock', mock: { fail_status: 500 } }],
        models: [{ id: 'm-broken', capabilities: ['chat'], context_window: 4096, routes: [{ provider: 'broken', model: 'u' }] }],
        routing: { circuit_breaker: { consecutive_failures: 2 } },
      },
    });
    await chat(gw, 'm-broken');
    await chat(gw, 'm-broken');
    text = await (await fetch(`${gw.url}/metrics`)).text();
    expect(valueOf(text, 'tollgate_route_circuit_state{route="broken/u"}')).toBe(2);
    expect(valueOf(text, 'tollgate_route_available{route="broken/u"}')).toBe(0);
  });

  it('asks for the admin token when one is configured', async () => {
    gw = await start(ADMIN_TOKEN);
    const refused = await fetch(`${gw.url}/metrics`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('invalid_admin_token');
    const scraped = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('tollgate_requests_total');
  });
});
