import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../storage/open-store.js';
import { createLogger } from '../logging/logger.js';
import type { Assets } from '../assets/assets.js';
import type { CreditGate } from '../billing/types.js';
import type { ProviderAdapter, VideoJobRef } from '../providers/types.js';
import type { Store } from '../storage/types.js';
import { VideoJobs, type NewVideoJob } from './video-jobs.js';

let store: Store;
beforeEach(async () => {
  store = await openStore('sqlite://:memory:');
  await store.createAccountIfAbsent({ id: 'acct', name: null, tier: 't', balanceMicros: 0 });
});
afterEach(async () => {
  await store.close();
});

const job: NewVideoJob = {
  accountId: 'acct', apiKeyId: 'key', requestId: 'req_1', model: 'video-model', provider: 'up', upstreamModel: 'sora-x',
  prompt: 'a fox', seconds: 4, size: '1280x720', chargedMicros: 400_000,
  upstream: { id: 'upstream-job-1', status: 'queued', progress: 0 },
};

function jobsOn(on: Store, cancelled: VideoJobRef[]): VideoJobs {
  const adapter = {
    id: 'up',
    videos: {
      cancel: (ref: VideoJobRef) => {
        cancelled.push(ref);
        return Promise.resolve();
      },
    },
  } as unknown as ProviderAdapter;
  return new VideoJobs(on, {} as Assets, {} as CreditGate, new Map([['up', adapter]]), 5_000, createLogger('silent'));
}

describe('VideoJobs.record', () => {
  it('records a job an upstream accepted, to be polled', async () => {
    const cancelled: VideoJobRef[] = [];
    const record = await jobsOn(store, cancelled).record(job);
    expect(await store.getVideoJob(record.id)).toMatchObject({ upstreamId: 'upstream-job-1', status: 'queued', chargedMicros: 400_000 });
    expect(cancelled).toEqual([]);
  });

  it('cancels the job upstream when it cannot be recorded, and fails', async () => {
    const cancelled: VideoJobRef[] = [];
    const failing = Object.create(store) as Store;
    failing.putVideoJob = () => Promise.reject(new Error('database is locked'));
    await expect(jobsOn(failing, cancelled).record(job)).rejects.toThrow('database is locked');
    expect(cancelled).toMatchObject([{ upstreamId: 'upstream-job-1', upstreamModel: 'sora-x' }]);
  });
});

describe('VideoJobs.cancel', () => {
  it('refuses to cancel a job whose charge is not on record yet (503), and cancels and refunds it once the charge is', async () => {
    const moved: number[] = [];
    const jobs = new VideoJobs(store, {} as Assets, { balanceMoved: (_: string, micros: number) => void moved.push(micros) } as unknown as CreditGate, new Map(), 5_000, createLogger('silent'));
    const record = await jobs.record(job);
    const early = await jobs.cancel('acct', record.id).catch((err: unknown) => err);
    expect(early).toMatchObject({ code: 'store_unavailable', status: 503, retryAfterSeconds: 1 });
    expect((await store.getVideoJob(record.id))?.status).toBe('queued');
    const charge = { accountId: 'acct', kind: 'charge' as const, amountMicros: -400_000, requestId: 'req_1', apiKeyId: 'key', note: null };
    await store.commitSettlements([{ requestId: 'req_1', charge, releaseReservation: false, usage: null }]);
    expect((await jobs.cancel('acct', record.id)).status).toBe('cancelled');
    expect([(await store.getAccount('acct'))?.balanceMicros, moved]).toEqual([0, [400_000]]);
  });
});
