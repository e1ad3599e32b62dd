/**
 * Uploaded files (POST /v1/files): the bytes in the blob store, the record in the store, kept
 * until `uploads.retention_ms` passes or the caller deletes them. Later requests name them by id
 * as inputs (a transcription's `file_id`, a video's `input_reference[file_id]`). A file of another
 * account is "not found", never "forbidden".
 */
import { orderedHexAt } from '../util/ordered-id.js';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.js';
import type { BlobRange, BlobStore } from '../storage/blobs/types.js';
import type { FileRecord, ListPage, Store } from '../storage/types.js';
import type { InputFile } from '../providers/types.js';
import type { BlobInfo } from '../storage/blobs/types.js';
import { PeriodicTask } from '../util/periodic-task.js';

const FILE_ID = /^file-[0-9a-f]{24}$/;
const SWEEP_BATCH = 500;

export interface UploadSettings {
  readonly maxBytes: number;
  readonly retentionMs: number;
  /** How long an upload being received may send nothing (`server.body_idle_timeout_ms`). */
  readonly idleTimeoutMs: number;
}

export interface NewUpload {
  readonly accountId: string;
  readonly filename: string;
  readonly purpose: string;
  readonly blob: BlobInfo;
  /** How long the caller wants it kept (OpenAI's `expires_after`), if it said. */
  readonly lifetimeMs?: number;
}

export class Files {
  private readonly sweeper: PeriodicTask;

  constructor(
    private readonly store: Store,
    readonly blobs: BlobStore,
    readonly settings: UploadSettings,
    private readonly logger: Logger,
    sweepEveryMs = 3_600_000,
  ) {
    this.sweeper = new PeriodicTask(() => this.deleteExpired(), sweepEveryMs, (err) => this.logger.warn({ err }, 'could not sweep expired files; trying again later'));
  }

  /** Records a blob already streamed into the store as the account's file. */
  async save(upload: NewUpload): Promise<FileRecord> {
    const file: FileRecord = {
      id: `file-${orderedHexAt(upload.blob.createdAt)}`,
      accountId: upload.accountId,
      blobId: upload.blob.id,
      filename: upload.filename,
      purpose: upload.purpose,
      contentType: upload.blob.contentType,
      bytes: upload.blob.size,
      createdAt: upload.blob.createdAt,
      // Never kept past the gateway's retention, whatever the caller asked for.
      expiresAt: upload.blob.createdAt + Math.min(upload.lifetimeMs ?? Infinity, this.settings.retentionMs),
    };
    await this.store.putFile(file);
    return file;
  }

  /** The account's file, or 404 naming `param`. */
  async find(accountId: string, id: string, param = 'file_id'): Promise<FileRecord> {
    const file = FILE_ID.test(id) ? await this.store.getFile(id) : undefined;
    if (file === undefined || file.accountId !== accountId || file.expiresAt <= Date.now()) {
      throw new GatewayError('file_not_found', `No file has the id "${id.slice(0, 64)}".`, { param });
    }
    return file;
  }

  list(accountId: string, page: ListPage, purpose?: string): Promise<FileRecord[]> {
    return this.store.listFiles(accountId, page, Date.now(), purpose);
  }

  async delete(accountId: string, id: string): Promise<FileRecord> {
    const file = await this.find(accountId, id);
    const blobId = await this.store.deleteFile(file.id);
    if (blobId !== undefined) await this.blobs.delete(blobId);
    return file;
  }

  async content(file: FileRecord, range?: BlobRange): Promise<NodeJS.ReadableStream> {
    const stream = await this.blobs.read(file.blobId, range);
    if (stream === undefined) throw new GatewayError('file_not_found', `The content of file "${file.id}" is no longer available.`, { param: 'file_id' });
    return stream;
  }

  /** A file as a provider call's input: read again from the blob store on every open. */
  inputFile(blobId: string, filename: string, contentType: string, size: number): InputFile {
    return {
      filename,
      contentType,
      size,
      open: async () => {
        const stream = await this.blobs.read(blobId);
        if (stream === undefined) throw new GatewayError('file_not_found', `The uploaded file "${filename}" is no longer available.`, { param: 'file' });
        return stream;
      },
    };
  }

  sweep(): Promise<void> {
    return this.sweeper.run();
  }

  private async deleteExpired(): Promise<void> {
    let blobIds: string[];
    do {
      blobIds = await this.store.deleteExpiredFiles(Date.now(), SWEEP_BATCH);
      for (const id of blobIds) await this.blobs.delete(id);
    } while (blobIds.length === SWEEP_BATCH);
  }

  close(): Promise<void> {
    return this.sweeper.stop();
  }
}
