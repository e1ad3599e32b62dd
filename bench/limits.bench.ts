/**
 * Micro-benchmark of the rate limiter (issue 4): one admission plus its settlement, on the memory
 * backend and on the machine's Redis, and the cost of the prompt's token bound against an exact
 * tokenizer. Run with `npm run bench:limits` (needs Redis at 127.0.0.1:6379 for the Redis cases).
 */
import { afterAll, bench, describe } from 'vitest';
import { countTokens } from 'gpt-tokenizer';
import { MemoryLimiter } from '../src/limits/memory-limiter.js';
import { RedisLimiter } from '../src/limits/redis/redis-limiter.js';
import { RedisConnection } from '../src/storage/redis/redis-connection.js';
import { createLogger } from '../src/logging/logger.js';
import { LimitPlans } from '../src/limits/plan.js';
import { chatTokenBound } from '../src/protocol/token-bound.js';
import type { ChatCompletionRequest } from '../src/protocol/chat.js';

const plans = new LimitPlans({
  bench: {
    models: ['*'],
    endpoints: ['*'],
    limits: { requests_per_minute: 1e12, tokens_per_minute: 1e15, daily: { chat: 1e12 }, max_in_flight: 1e9 },
    model_limits: [],
  },
});
const plan = plans.planFor('bench', 'gpt-4o-mini', 'chat');
const SETTLED = { tokens: 700, failed: false };

const memory = new MemoryLimiter();
const KEYS = Array.from({ length: 10_000 }, (_, i) => `key${String(i).padStart(8, '0')}`);
let n = 0;

const connection = new RedisConnection(
  { url: process.env.TOLLGATE_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', commandTimeoutMs: 1000, outageEffect: 'the benchmark fails' },
  createLogger('warn'),
);
const redis = connection.client;
const prefix = `tollgate-bench:${process.pid}:`;
const shared = new RedisLimiter(connection, { keyPrefix: prefix, inFlightTtlMs: 660_000 });

afterAll(async () => {
  await memory.close();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await connection.close();
});

describe('admission + settlement, all four quantities', () => {
  bench('memory, one key', () => {
    memory.admit({ keyId: 'one-key', requestId: 'r', plan, tokens: 1000 }).settle(SETTLED);
  });

  bench('memory, 10,000 keys in turn', () => {
    memory.admit({ keyId: KEYS[n++ % KEYS.length] as string, requestId: 'r', plan, tokens: 1000 }).settle(SETTLED);
  });

  bench('redis, one at a time (round trip)', async () => {
    const admission = await shared.admit({ keyId: 'one-key', requestId: `r${n++}`, plan, tokens: 1000 });
    admission.settle(SETTLED);
  });

  bench('redis, 64 concurrent (per admission)', async () => {
    const batch = [];
    for (let i = 0; i < 64; i++) batch.push(shared.admit({ keyId: KEYS[i] as string, requestId: `r${n++}`, plan, tokens: 1000 }));
    for (const admission of await Promise.all(batch)) admission.settle(SETTLED);
  });
});

// A 2 KB prompt of ordinary English, as CLIENTS.md measured the tokenizers with.
const sentence = 'The quick brown fox jumps over the lazy dog while the committee reviews the quarterly report. ';
const prompt = sentence.repeat(Math.ceil(2048 / sentence.length)).slice(0, 2048);
const request: ChatCompletionRequest = { model: 'gpt-4o-mini', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: prompt }], max_tokens: 256 };
const bodyBytes = Buffer.byteLength(JSON.stringify(request));

describe('prompt tokens at admission, 2 KB prompt', () => {
  bench('upper bound from the body size (what Tollgate does)', () => {
    chatTokenBound(request, bodyBytes, { contextWindow: 128_000, maxOutputTokens: 4096, tokensPerImage: 2_500 });
  });

  bench('exact count with gpt-tokenizer (o200k)', () => {
    countTokens(prompt);
  });
});
