/** Video jobs as table rows (BIGINT columns come back from PostgreSQL as strings, hence Number()). */
import type { Selectable, Updateable } from 'kysely';
import type { VideoJobsTable } from './database.js';
import type { VideoJobChanges, VideoJobRecord, VideoJobStatus } from '../types.js';

const nullableNumber = (value: number | string | null): number | null => (value === null ? null : Number(value));

export function videoJobRow(job: VideoJobRecord): VideoJobsTable {
  return {
    id: job.id,
    account_id: job.accountId,
    api_key_id: job.apiKeyId,
    request_id: job.requestId,
    model: job.model,
    provider: job.provider,
    upstream_model: job.upstreamModel,
    upstream_id: job.upstreamId,
    status: job.status,
    progress: job.progress,
    prompt: job.prompt,
    seconds: job.seconds,
    size: job.size,
    charged_micros: job.chargedMicros,
    error_code: job.errorCode,
    error_message: job.errorMessage,
    asset_id: job.assetId,
    created_at: job.createdAt,
    updated_at: job.updatedAt,
    completed_at: job.completedAt,
    next_poll_at: job.nextPollAt,
    poll_failures: job.pollFailures,
    lease_owner: job.leaseOwner,
    lease_until: job.leaseUntil,
  };
}

export function videoJobOf(row: Selectable<VideoJobsTable>): VideoJobRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    apiKeyId: row.api_key_id,
    requestId: row.request_id,
    model: row.model,
    provider: row.provider,
    upstreamModel: row.upstream_model,
    upstreamId: row.upstream_id,
    status: row.status as VideoJobStatus,
    progress: Number(row.progress),
    prompt: row.prompt,
    seconds: Number(row.seconds),
    size: row.size,
    chargedMicros: Number(row.charged_micros),
    errorCode: row.error_code,
    errorMessage: row.error_message,
    assetId: row.asset_id,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    completedAt: nullableNumber(row.completed_at),
    nextPollAt: Number(row.next_poll_at),
    pollFailures: Number(row.poll_failures),
    leaseOwner: row.lease_owner,
    leaseUntil: nullableNumber(row.lease_until),
  };
}

const COLUMN_OF: { readonly [K in keyof Required<VideoJobChanges>]: keyof VideoJobsTable } = {
  status: 'status',
  progress: 'progress',
  errorCode: 'error_code',
  errorMessage: 'error_message',
  assetId: 'asset_id',
  updatedAt: 'updated_at',
  completedAt: 'completed_at',
  nextPollAt: 'next_poll_at',
  pollFailures: 'poll_failures',
  leaseOwner: 'lease_owner',
  leaseUntil: 'lease_until',
};

export function videoJobUpdate(changes: VideoJobChanges): Updateable<VideoJobsTable> {
  const update: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(changes)) {
    if (value !== undefined) update[COLUMN_OF[field as keyof VideoJobChanges]] = value;
  }
  return update;
}
