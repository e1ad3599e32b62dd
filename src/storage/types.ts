/**
 * The storage interface. Every backend implements it and runs the same conformance suite
 * (src/storage/store.conformance.ts). Nothing here knows HTTP; the hot path never calls it
 * directly except on a cache miss.
 */

export type KeyStatus = 'active' | 'disabled';

export interface KeyScope {
  models?: string[];
  endpoints?: string[];
  sdks?: string[];
}

export interface AccountRecord {
  id: string;
  name: string | null;
  tier: string;
  /** Credit balance in millionths of a credit, so that money is always an exact integer. */
  balanceMicros: number;
  createdAt: number;
}

export interface ApiKeyRecord {
  /** The public part of the key (`sk-tg-<id>-…`). */
  id: string;
  accountId: string;
  name: string | null;
  /** SHA-256 (hex) of the secret part; the key itself is never stored. */
  secretHash: string;
  status: KeyStatus;
  scope: KeyScope | null;
  createdAt: number;
}

/** `balanceMicros` of a new account is its opening credit, recorded as a top-up in the ledger. */
export type NewAccount = Omit<AccountRecord, 'createdAt'> & {
  /** The request that created the account, recorded on its opening credit's ledger entry. */
  readonly openingRequestId?: string;
};

export type LedgerKind = 'topup' | 'charge' | 'refund' | 'adjustment';

/** One movement of an account's balance. The balance is always the sum of its account's entries. */
export interface LedgerEntry {
  id: string;
  accountId: string;
  kind: LedgerKind;
  /** Signed: a top-up is positive, a charge negative. */
  amountMicros: number;
  /** The request it belongs to (a charge's request, or the admin request of a top-up). */
  requestId: string | null;
  apiKeyId: string | null;
  note: string | null;
  createdAt: number;
}

export type NewLedgerEntry = Omit<LedgerEntry, 'id' | 'createdAt'>;

/** Where a page of a ledger starts: the last entry of the page before, as read from the store. */
export type LedgerCursor = Pick<LedgerEntry, 'id' | 'createdAt'>;

/**
 * How far a balance may go either way: 9 × 10^9 credits in micros, inside 2^53, so that balances
 * and sums of ledger amounts stay exact as JavaScript numbers (and far inside a 64-bit integer).
 */
export const MAX_BALANCE_MICROS = 9_000_000_000_000_000;

/** A ledger entry refused because the balance would leave ±MAX_BALANCE_MICROS; nothing was written. */
export class BalanceOutOfRangeError extends Error {
  constructor(readonly accountId: string) {
    super(`The balance of account "${accountId}" would leave the range of ±${MAX_BALANCE_MICROS} micros.`);
    this.name = 'BalanceOutOfRangeError';
  }
}

/** What one finished request did, for usage reports. */
export interface UsageRecord {
  requestId: string;
  accountId: string;
  apiKeyId: string;
  model: string;
  provider: string | null;
  upstreamModel: string | null;
  modality: string;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
  /** The HTTP status answered (200 also for a stream that ended in an error frame). */
  status: number;
  latencyMs: number;
  startedAt: number;
  endedAt: number;
}

/** The outcome of a finished request as the store commits it, in batches. */
export interface Settlement {
  requestId: string;
  /** The charge, if anything is charged (amountMicros negative). */
  charge: NewLedgerEntry | null;
  /** A credit reservation held in the store for the request, to release. */
  releaseReservation: boolean;
  usage: UsageRecord | null;
  /** The recorded response for the request's Idempotency-Key, committed with its charge. */
  idempotency?: IdempotencyRecord | null;
}

/**
 * The finished response of a request sent with an Idempotency-Key, replayed to identical resends
 * until it expires. Its id is derived from the account and the key, so accounts never share one.
 */
/**
 * The status of a record that binds a key to its request's fingerprint and holds no response. It
 * is kept under an id of its own (bindingRecordId), and a later binding of the key replaces it.
 */
export const BINDING_STATUS = 0;

export interface IdempotencyRecord {
  id: string;
  accountId: string;
  /** SHA-256 (hex) of the method, path and canonical body of the request. */
  fingerprint: string;
  /** The X-Request-Id of the request that produced the response. */
  requestId: string;
  /**
   * The response's status; BINDING_STATUS for a key whose request ended with nothing to replay
   * (refused before it ran, or a retryable failure): it binds the key to the request, no more.
   */
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  createdAt: number;
  expiresAt: number;
}

/**
 * A response of the Responses API, kept for the output items later requests may refer to
 * (`item_reference`), for the conversations that continue it (`previous_response_id`) and for
 * `GET /v1/responses/{id}`.
 */
export interface StoredResponse {
  /** `resp_…` */
  id: string;
  accountId: string;
  /** JSON text of the output items. */
  output: string;
  /** JSON text of the whole response as shown; null for a response kept by an earlier version. */
  response: string | null;
  /** JSON text of the request's own input items, references resolved; null for a response kept by an earlier version. */
  input: string | null;
  /** The response this one continued, if any. */
  previousResponseId: string | null;
  createdAt: number;
  expiresAt: number;
}

/** What a conversation needs of each of its responses. */
export type StoredResponseTurn = Pick<StoredResponse, 'id' | 'input' | 'output' | 'previousResponseId'>;

export interface CreditReservation {
  requestId: string;
  accountId: string;
  amountMicros: number;
  expiresAt: number;
}

/** Whether a reservation was made, and the account's figures at that moment. */
export interface ReservationResult {
  reserved: boolean;
  balanceMicros: number;
  /** Held by other requests in flight (this one not included). */
  reservedMicros: number;
}

export interface UsageQuery {
  accountId?: string;
  apiKeyId?: string;
  model?: string;
  /** Unix milliseconds, inclusive. */
  from?: number;
  /** Unix milliseconds, exclusive. */
  to?: number;
}

/** Usage summed per UTC day, account, key and model. */
export interface UsageRow {
  day: string;
  accountId: string;
  apiKeyId: string;
  model: string;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  costMicros: number;
}

export type NewApiKey = Omit<ApiKeyRecord, 'createdAt'>;
export type ApiKeyChanges = Partial<Pick<ApiKeyRecord, 'name' | 'status' | 'scope'>>;

/** A file Tollgate serves to its account: a generated image (later audio, video), its bytes in the blob store. */
export interface AssetRecord {
  /** `asset_` + 24 hex digits. */
  id: string;
  accountId: string;
  /** The blob holding the content. */
  blobId: string;
  contentType: string;
  bytes: number;
  /** What made it: the request id. */
  requestId: string;
  createdAt: number;
}

/** A file an account uploaded (POST /v1/files), used as an input by later requests. */
export interface FileRecord {
  /** `file-` + 24 hex digits. */
  id: string;
  accountId: string;
  blobId: string;
  filename: string;
  /** What the caller said it is for (`transcription`, `vision`, `user_data`, ...). */
  purpose: string;
  contentType: string;
  bytes: number;
  createdAt: number;
  /** Unix ms after which it is swept. */
  expiresAt: number;
}

export type VideoJobStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'cancelled';

/** A video generation job: Tollgate's record of a job at an upstream, polled until it ends. */
export interface VideoJobRecord {
  /** `video_` + 24 hex digits. */
  id: string;
  accountId: string;
  apiKeyId: string;
  /** The request that created it. */
  requestId: string;
  model: string;
  provider: string;
  upstreamModel: string;
  upstreamId: string;
  status: VideoJobStatus;
  progress: number;
  prompt: string;
  seconds: number;
  size: string;
  /** What the creation was charged (refunded if the job fails or is cancelled). */
  chargedMicros: number;
  errorCode: string | null;
  errorMessage: string | null;
  /** The finished video, once completed. */
  assetId: string | null;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
  /** When the job should next be polled (Unix ms). */
  nextPollAt: number;
  /** Polls in a row that failed (upstream unreachable), to give up after a while. */
  pollFailures: number;
  /** The instance polling it now, until `leaseUntil`: two instances never poll one job at once. */
  leaseOwner: string | null;
  leaseUntil: number | null;
}

/** What a poll (or a cancel) changes in a job. */
export type VideoJobChanges = Partial<
  Pick<VideoJobRecord, 'status' | 'progress' | 'errorCode' | 'errorMessage' | 'assetId' | 'updatedAt' | 'completedAt' | 'nextPollAt' | 'pollFailures' | 'leaseOwner' | 'leaseUntil'>
>;

export interface ListPage {
  /** Items after this id in the order (exclusive cursor), if any. */
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

export interface Store {
  /** Brings the schema to the latest version; runs at every start. */
  migrate(): Promise<void>;
  getAccount(id: string): Promise<AccountRecord | undefined>;
  /**
   * Creates the account if absent, with its opening balance as a top-up in the same transaction
   * (never an account without the credit it was created with); returns whether it was created.
   */
  createAccountIfAbsent(account: NewAccount): Promise<boolean>;
  updateAccount(id: string, changes: { name?: string | null; tier?: string }): Promise<void>;
  getApiKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** Inserts a key, or replaces every field of the key with the same id. */
  putApiKey(key: NewApiKey): Promise<void>;
  /**
   * Changes only the given fields of an existing key, in one statement (a change made meanwhile
   * to another field stays, and a deleted key stays deleted); returns the key as changed, or
   * undefined when there is no such key.
   */
  updateApiKey(id: string, changes: ApiKeyChanges): Promise<ApiKeyRecord | undefined>;
  listApiKeys(accountId: string): Promise<ApiKeyRecord[]>;
  /** Removes a key; returns whether it existed. Its ledger entries and usage stay. */
  deleteApiKey(id: string): Promise<boolean>;
  listAccounts(): Promise<AccountRecord[]>;

  /**
   * Appends one entry and moves the balance by its amount, atomically; returns the account after.
   * Throws BalanceOutOfRangeError, writing nothing, if the balance would leave ±MAX_BALANCE_MICROS.
   */
  addLedgerEntry(entry: NewLedgerEntry): Promise<AccountRecord>;
  /**
   * Commits finished requests in one transaction: charges (each request charged once, however
   * often it is sent), reservations released, usage recorded.
   */
  commitSettlements(settlements: readonly Settlement[]): Promise<void>;
  /**
   * The account's entries newest first, by creation time and then by id (the entries of one
   * settlement batch share their time), at most `limit`; with `after`, those that follow it in
   * that order. The cursor is placed by its stored time, not by the time its id begins with: an
   * entry's id may be drawn a few milliseconds after the time it is written with.
   */
  listLedger(accountId: string, limit: number, after?: LedgerCursor): Promise<LedgerEntry[]>;
  getLedgerEntry(id: string): Promise<LedgerEntry | undefined>;
  /** The entry of a kind a request made (at most one: a settlement sent twice is recorded once). */
  findLedgerEntry(requestId: string, kind: LedgerKind): Promise<LedgerEntry | undefined>;
  ledgerSum(accountId: string): Promise<number>;

  /**
   * Holds credit for a request in flight if the balance, less what is already held, covers it;
   * atomic across instances. A holder that dies is cleaned up by `releaseExpiredReservations`.
   */
  reserveCredits(reservation: CreditReservation): Promise<ReservationResult>;
  releaseExpiredReservations(now: number): Promise<number>;

  usageSummary(query: UsageQuery): Promise<UsageRow[]>;
  /** Deletes at most `limit` of the account's usage records started before `before`; returns how many. */
  deleteUsageRecordsBefore(accountId: string, before: number, limit: number): Promise<number>;

  /** Keeps a Responses API response's output items, for requests that refer to them. */
  putStoredResponse(response: StoredResponse): Promise<void>;
  /** The account's stored responses among `ids` that have not expired at `now`. */
  getStoredResponses(accountId: string, ids: readonly string[], now: number): Promise<StoredResponse[]>;
  /** Only the output items of the same: what an item reference needs, not the rows' inputs. */
  getStoredResponseOutputs(accountId: string, ids: readonly string[], now: number): Promise<Array<Pick<StoredResponse, 'id' | 'output'>>>;
  /**
   * The account's response `id` and the ones it continued, newest first, at most `limit`: the
   * walk stops at the first one that is not the account's, has expired at `now` or does not exist.
   */
  getStoredResponseChain(accountId: string, id: string, now: number, limit: number): Promise<StoredResponseTurn[]>;
  /**
   * Keeps the account's response `id` and the ones it continued (walked as above) until
   * `expiresAt`, those of them that expire before `staleBefore`; returns how many.
   */
  extendStoredResponseChain(accountId: string, id: string, now: number, limit: number, expiresAt: number, staleBefore: number): Promise<number>;
  /** Deletes the account's stored response; returns whether it existed (and had not expired at `now`). */
  deleteStoredResponse(accountId: string, id: string, now: number): Promise<boolean>;
  /** Deletes stored responses expired at `now`, at most `limit`; returns how many. */
  deleteExpiredStoredResponses(now: number, limit: number): Promise<number>;

  /** The recorded response of an Idempotency-Key, if any and not expired at `now`. */
  getIdempotencyRecord(id: string, now: number): Promise<IdempotencyRecord | undefined>;
  /** Deletes records expired at `now`, at most `limit` of them; returns how many. */
  deleteExpiredIdempotencyRecords(now: number, limit: number): Promise<number>;
  putAsset(asset: AssetRecord): Promise<void>;
  getAsset(id: string): Promise<AssetRecord | undefined>;
  /** Deletes assets created before `before`, at most `limit`; returns their blob ids. */
  deleteAssetsCreatedBefore(before: number, limit: number): Promise<string[]>;
  /** Deletes an asset; returns its blob id, or undefined if it did not exist. */
  deleteAsset(id: string): Promise<string | undefined>;

  putFile(file: FileRecord): Promise<void>;
  getFile(id: string): Promise<FileRecord | undefined>;
  /** The account's files unexpired at `now` by creation time, `limit` of them after the cursor. */
  /** The account's unexpired files, those of one purpose if given. */
  listFiles(accountId: string, page: ListPage, now: number, purpose?: string): Promise<FileRecord[]>;
  /** Deletes a file; returns its blob id, or undefined if it did not exist. */
  deleteFile(id: string): Promise<string | undefined>;
  /** Deletes files expired at `now`, at most `limit`; returns their blob ids. */
  deleteExpiredFiles(now: number, limit: number): Promise<string[]>;

  putVideoJob(job: VideoJobRecord): Promise<void>;
  getVideoJob(id: string): Promise<VideoJobRecord | undefined>;
  listVideoJobs(accountId: string, page: ListPage): Promise<VideoJobRecord[]>;
  /**
   * Applies the changes if the job is in one of `ifStatus` (and, when `ifLeaseOwner` is given,
   * still leased by that owner); returns whether it was changed. The conditions make a cancel
   * and a poll that race end one way only. A `refund` is committed in the same transaction, so
   * that a job that failed or was cancelled is refunded exactly once.
   */
  updateVideoJob(id: string, changes: VideoJobChanges, ifStatus: readonly VideoJobStatus[], options?: { ifLeaseOwner?: string; refund?: NewLedgerEntry }): Promise<boolean>;
  /**
   * Leases up to `limit` jobs still in flight whose next poll is due and whose lease (if any) has
   * expired, to `owner` until `now + leaseMs`; atomic across instances. Returns them.
   */
  leaseDueVideoJobs(owner: string, now: number, leaseMs: number, limit: number): Promise<VideoJobRecord[]>;
  /** Deletes a finished job; returns whether it existed. */
  deleteVideoJob(id: string): Promise<boolean>;

  /** One trivial query (`select 1`): resolves when the storage answers, for the readiness probe. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
