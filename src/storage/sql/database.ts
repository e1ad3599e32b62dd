/** The tables as the shared query layer sees them (the same on SQLite and PostgreSQL). */
import type { Generated } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string | null;
  tier: string;
  balance_micros: number;
  reserved_micros: Generated<number>;
  created_at: number;
}

export interface LedgerEntriesTable {
  id: string;
  account_id: string;
  kind: string;
  amount_micros: number;
  request_id: string | null;
  api_key_id: string | null;
  note: string | null;
  created_at: number;
}

export interface CreditReservationsTable {
  request_id: string;
  account_id: string;
  amount_micros: number;
  expires_at: number;
}

export interface UsageRecordsTable {
  request_id: string;
  account_id: string;
  api_key_id: string;
  model: string;
  provider: string | null;
  upstream_model: string | null;
  modality: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost_micros: number;
  status: number;
  latency_ms: number;
  started_at: number;
  ended_at: number;
  /** The request's charge (negative micros) when the row carries it instead of a ledger row. */
  charge_micros: number | null;
}

export interface IdempotencyRecordsTable {
  id: string;
  account_id: string;
  fingerprint: string;
  request_id: string;
  status: number;
  /** JSON text of the recorded headers. */
  headers: string;
  /** The body as text: UTF-8 as it was, or base64 when it is binary (see body_encoding). */
  body: string;
  body_encoding: string;
  created_at: number;
  expires_at: number;
}

export interface AssetsTable {
  id: string;
  account_id: string;
  blob_id: string;
  content_type: string;
  bytes: number;
  request_id: string;
  created_at: number;
}

export interface FilesTable {
  id: string;
  account_id: string;
  blob_id: string;
  filename: string;
  purpose: string;
  content_type: string;
  bytes: number;
  created_at: number;
  expires_at: number;
}

export interface VideoJobsTable {
  id: string;
  account_id: string;
  api_key_id: string;
  request_id: string;
  model: string;
  provider: string;
  upstream_model: string;
  upstream_id: string;
  status: string;
  progress: number;
  prompt: string;
  seconds: number;
  size: string;
  charged_micros: number;
  error_code: string | null;
  error_message: string | null;
  asset_id: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  next_poll_at: number;
  poll_failures: number;
  lease_owner: string | null;
  lease_until: number | null;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string | null;
  secret_hash: string;
  status: string;
  /** JSON text of the key's scope, or null for no scope. */
  scope: string | null;
  created_at: number;
}

export interface MigrationsLock {
  id: Generated<number>;
}

/** A response of the Responses API kept so that later requests may refer to its output items. */
export interface StoredResponsesTable {
  id: string;
  account_id: string;
  /** JSON text of the response's output items. */
  output: string;
  /** JSON text of the whole response; null in rows kept before migration 0007. */
  response: string | null;
  /** JSON text of the request's own input items; null in rows kept before migration 0007. */
  input: string | null;
  previous_response_id: string | null;
  created_at: number;
  expires_at: number;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  ledger_entries: LedgerEntriesTable;
  credit_reservations: CreditReservationsTable;
  usage_records: UsageRecordsTable;
  idempotency_records: IdempotencyRecordsTable;
  assets: AssetsTable;
  files: FilesTable;
  video_jobs: VideoJobsTable;
  stored_responses: StoredResponsesTable;
}
