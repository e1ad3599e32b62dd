/**
 * Files Tollgate serves to the account that made them (generated images now; audio and video
 * outputs later): the bytes in the blob store, the record in the store. An asset of another
 * account is "not found", never "forbidden", so no one learns that another account's id exists.
 * Assets older than the retention are swept with their blobs.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.js';
import { PeriodicTask } from '../util/periodic-task.js';
import type { BlobRange, BlobSource, BlobStore } from '../storage/blobs/types.js';
import type { AssetRecord, Store } from '../storage/types.js';

const ASSET_ID = /^asset_[0-9a-f]{24}$/;
const SWEEP_BATCH = 500;

export function newAssetId(): string {
  return `asset_${randomBytes(12).toString('hex')}`;
}

export class Assets {
  private readonly sweeper: PeriodicTask;

  constructor(
    private readonly store: Store,
    readonly blobs: BlobStore,
    private readonly retentionMs: number,
    private readonly logger: Logger,
    sweepEveryMs = 3_600_000,
  ) {
    this.sweeper = new PeriodicTask(() => this.deleteExpired(), sweepEveryMs, (err) => this.logger.warn({ err }, 'could not sweep expired assets; trying again later'));
  }

  async save(accountId: string, requestId: string, data: Uint8Array, contentType: string): Promise<AssetRecord> {
    const blob = await this.blobs.putBuffer(data, contentType);
    const asset: AssetRecord = { id: newAssetId(), accountId, blobId: blob.id, contentType, bytes: blob.size, requestId, createdAt: blob.createdAt };
    await this.store.putAsset(asset);
    return asset;
  }

  /** Streams content into a new asset, at most `maxBytes` (BlobTooLargeError beyond, nothing kept). */
  async saveStream(accountId: string, requestId: string, source: BlobSource, contentType: string, maxBytes: number): Promise<AssetRecord> {
    const blob = await this.blobs.put(source, { contentType, maxBytes });
    const asset: AssetRecord = { id: newAssetId(), accountId, blobId: blob.id, contentType, bytes: blob.size, requestId, createdAt: blob.createdAt };
    try {
      await this.store.putAsset(asset);
    } catch (err) {
      await this.blobs.delete(blob.id).catch(() => false);
      throw err;
    }
    return asset;
  }

  /** Deletes an asset and its bytes (nothing if it is gone already). */
  async delete(id: string): Promise<void> {
    const blobId = await this.store.deleteAsset(id);
    if (blobId !== undefined) await this.blobs.delete(blobId);
  }

  /** The account's asset, or 404; also once its retention ended, though the hourly sweep may not have removed it yet. */
  async find(accountId: string, id: string): Promise<AssetRecord> {
    const asset = ASSET_ID.test(id) ? await this.store.getAsset(id) : undefined;
    if (asset === undefined || asset.accountId !== accountId || asset.createdAt + this.retentionMs <= Date.now()) {
      throw new GatewayError('asset_not_found', `No asset has the id "${id.slice(0, 64)}".`, { param: 'asset_id' });
    }
    return asset;
  }

  /** The asset's content, whole or one inclusive byte range; 404 if its bytes are gone. */
  async content(asset: AssetRecord, range?: BlobRange): Promise<NodeJS.ReadableStream> {
    const stream = await this.blobs.read(asset.blobId, range);
    if (stream === undefined) throw new GatewayError('asset_not_found', `The content of asset "${asset.id}" is no longer available.`, { param: 'asset_id' });
    return stream;
  }

  sweep(): Promise<void> {
    return this.sweeper.run();
  }

  private async deleteExpired(): Promise<void> {
    const before = Date.now() - this.retentionMs;
    let blobIds: string[];
    do {
      blobIds = await this.store.deleteAssetsCreatedBefore(before, SWEEP_BATCH);
      for (const id of blobIds) await this.blobs.delete(id);
    } while (blobIds.length === SWEEP_BATCH);
    // Blobs nothing points at (a save that failed half-way) go too.
    await this.blobs.deleteCreatedBefore(before, SWEEP_BATCH);
  }

  async close(): Promise<void> {
    await this.sweeper.stop();
    await this.blobs.close();
  }
}
