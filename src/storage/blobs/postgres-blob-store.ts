/**
 * Blobs in PostgreSQL, for several instances sharing one database: content in large objects,
 * metadata in the `blobs` table, which points at each large object by oid. Unqualified names
 * throughout, so the pool's search_path (`?schema=`) decides where the table lives. Large
 * objects themselves belong to the database, not to a schema.
 *
 * A put is received whole into a temporary file first (spool.ts: a connection is never held
 * while a client is slow to send), then written in one transaction on one client: create the
 * large object, append each chunk, insert the row, commit. Any failure (limit crossed, source
 * error, lost connection) rolls back, and a rollback discards the large object with everything
 * else, so a failed put leaves neither a row nor an orphan large object. Close waits for the puts
 * under way (puts-in-flight.ts) before it ends the pool.
 */
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { Readable } from 'node:stream';
import type pg from 'pg';
import { isBlobId, newBlobId } from './blob-id.js';
import { resolveRange } from './byte-range.js';
import { MeteredSource } from './metered-source.js';
import { PutsInFlight } from './puts-in-flight.js';
import { rechunk } from './rechunk.js';
import { spool, type Spooled } from './spool.js';
import { sweepSpool } from './spool-sweep.js';
import { blobStoreClosed } from './store-closed.js';
import type { BlobInfo, BlobRange, BlobSource, BlobStore, PutOptions } from './types.js';
import { createIfMissing } from '../postgres/concurrent-ddl.js';

/** Bytes per lo_put / lo_get: few round trips, small statements, little memory per stream. */
const CHUNK_BYTES = 256 * 1024;

interface BlobRow {
  id: string;
  oid: number | string;
  // int8 arrives as a string unless some other module set a global parser; accept both.
  size: number | string;
  sha256: string;
  content_type: string;
  created_at: number | string;
}

export interface PostgresBlobStoreOptions {
  /** Whether close() ends the pool (the default: the store owns it, as the SQL store owns its own). */
  endPoolOnClose?: boolean;
  /** Where puts are received before they are written (default: the system's temporary directory). */
  spoolDirectory?: string;
  /** How long close waits for puts still receiving their bytes before it cuts them (see puts-in-flight.ts). */
  closeGraceMs?: number;
}

export class PostgresBlobStore implements BlobStore {
  private closed = false;
  private closing: Promise<void> | undefined;
  private readonly puts = new PutsInFlight();
  private readonly spoolDirectory: string;

  constructor(
    private readonly pool: pg.Pool,
    private readonly options: PostgresBlobStoreOptions = {},
  ) {
    this.spoolDirectory = options.spoolDirectory ?? tmpdir();
  }

  /** Creates the table if it is missing; safe to run at every start. */
  async migrate(): Promise<void> {
    // Instances starting together on a fresh database run this at the same moment.
    await createIfMissing(() => this.pool.query(`
      create table if not exists blobs (
        id varchar(40) primary key,
        oid oid not null,
        size bigint not null,
        sha256 varchar(64) not null,
        content_type text not null,
        created_at bigint not null
      )`));
    // deleteCreatedBefore walks blobs oldest first.
    await createIfMissing(() => this.pool.query('create index if not exists blobs_created_at_idx on blobs (created_at)'));
  }

  /** Removes the temporary files of puts a crash cut short (see spool-sweep.ts); returns how many. */
  sweepSpool(): Promise<number> {
    return sweepSpool(this.spoolDirectory);
  }

  async put(source: BlobSource, options: PutOptions): Promise<BlobInfo> {
    const meter = new MeteredSource(source, options.maxBytes);
    return this.puts.run(() => this.receive(meter, options.contentType), meter);
  }

  async putBuffer(data: Uint8Array, contentType: string): Promise<BlobInfo> {
    // Already whole in memory: nothing to wait for while a connection is held.
    return this.puts.run(() => this.write([data], { size: data.length, sha256: createHash('sha256').update(data).digest('hex'), contentType }));
  }

  /** Receives a put's bytes whole into a temporary file, then writes them. */
  private async receive(meter: MeteredSource, contentType: string): Promise<BlobInfo> {
    // The limit and the digest are applied as the bytes arrive, before any connection is taken.
    let spooled: Spooled;
    try {
      spooled = await spool(meter, this.spoolDirectory);
    } catch (err) {
      // The temporary file could not be written (a full disk): the upload's socket is not left open and unread.
      meter.abandon();
      throw err;
    }
    try {
      return await this.write(spooled.read(CHUNK_BYTES), { size: meter.size, sha256: meter.sha256(), contentType });
    } finally {
      await spooled.remove();
    }
  }

  /** Writes bytes already received whole, in one transaction. */
  private async write(bytes: AsyncIterable<Uint8Array> | Iterable<Uint8Array>, known: { size: number; sha256: string; contentType: string }): Promise<BlobInfo> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('begin');
      const created = await client.query<{ oid: number | string }>('select lo_create(0) as oid');
      const oid = created.rows[0]!.oid;
      let offset = 0;
      for await (const chunk of rechunk(toAsync(bytes), CHUNK_BYTES)) {
        await client.query('select lo_put($1, $2, $3)', [oid, offset, chunk]);
        offset += chunk.length;
      }
      const info: BlobInfo = { id: newBlobId(), size: known.size, sha256: known.sha256, contentType: known.contentType, createdAt: Date.now() };
      await client.query('insert into blobs (id, oid, size, sha256, content_type, created_at) values ($1, $2, $3, $4, $5, $6)', [
        info.id,
        oid,
        info.size,
        info.sha256,
        info.contentType,
        info.createdAt,
      ]);
      await client.query('commit');
      return info;
    } catch (err) {
      // Undo everything written, the large object included.
      await client.query('rollback').catch((rollbackErr: unknown) => {
        broken = rollbackErr instanceof Error ? rollbackErr : new Error(String(rollbackErr));
      });
      throw err;
    } finally {
      // A client whose rollback failed is in an unknown state: destroy it rather than reuse it.
      client.release(broken);
    }
  }


  async stat(id: string): Promise<BlobInfo | undefined> {
    const row = await this.row(id);
    return row === undefined ? undefined : toInfo(row);
  }

  async read(id: string, range?: BlobRange): Promise<NodeJS.ReadableStream | undefined> {
    const row = await this.row(id);
    if (row === undefined) return undefined;
    const { start, end } = resolveRange(Number(row.size), range);
    // Pulled one chunk per read() call, each its own short statement outside any transaction:
    // a slow reader holds neither a client nor a snapshot. A delete that commits mid-read makes
    // the next lo_get fail, which errors the stream.
    return Readable.from(fetchChunks(this.pool, row.oid, start, end), { objectMode: false });
  }

  async delete(id: string): Promise<boolean> {
    this.assertOpen();
    if (!isBlobId(id)) return false;
    // One statement, so the row and its large object go together or not at all.
    const result = await this.pool.query('with gone as (delete from blobs where id = $1 returning oid) select lo_unlink(oid) from gone', [id]);
    return (result.rowCount ?? 0) > 0;
  }

  async deleteCreatedBefore(before: number, limit: number): Promise<number> {
    this.assertOpen();
    const count = Math.floor(limit);
    if (!(count > 0)) return 0;
    // `skip locked`: two instances sweeping at once split the work instead of waiting on each other.
    const result = await this.pool.query(
      `with due as (
         select id from blobs where created_at < $1 order by created_at limit $2 for update skip locked
       ), gone as (
         delete from blobs using due where blobs.id = due.id returning blobs.oid
       )
       select lo_unlink(oid) from gone`,
      [Math.min(before, Number.MAX_SAFE_INTEGER), count],
    );
    return result.rowCount ?? 0;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      // pool.end() waits for checked-out clients, but a put still receiving its bytes holds none
      // yet, and would find the pool ended: the puts are waited for first.
      await this.puts.close(this.options.closeGraceMs);
      if (this.options.endPoolOnClose ?? true) await this.pool.end();
    })();
    return this.closing;
  }

  private async row(id: string): Promise<BlobRow | undefined> {
    this.assertOpen();
    if (!isBlobId(id)) return undefined;
    const { rows } = await this.pool.query<BlobRow>('select id, oid, size, sha256, content_type, created_at from blobs where id = $1', [id]);
    return rows[0];
  }

  private assertOpen(): void {
    if (this.closed) throw blobStoreClosed();
  }
}

async function* fetchChunks(pool: pg.Pool, oid: number | string, start: number, end: number): AsyncGenerator<Buffer> {
  for (let position = start; position <= end; position += CHUNK_BYTES) {
    const length = Math.min(CHUNK_BYTES, end - position + 1);
    const { rows } = await pool.query<{ data: Buffer }>('select lo_get($1, $2, $3) as data', [oid, position, length]);
    yield rows[0]!.data;
  }
}

function toInfo(row: BlobRow): BlobInfo {
  return { id: row.id, size: Number(row.size), sha256: row.sha256, contentType: row.content_type, createdAt: Number(row.created_at) };
}

async function* toAsync(bytes: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  yield* bytes;
}
