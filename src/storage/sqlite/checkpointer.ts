/**
 * WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database
 * file (and syncs it) whenever the log passes 1,000 pages, inside whichever commit crossed the
 * line: on the gateway's thread that stalled every request for tens of milliseconds once a second
 * under load. Here the main connection never checkpoints; a worker thread with a connection of
 * its own does, every second, in PASSIVE mode (it never blocks the writer).
 */
import { Worker } from 'node:worker_threads';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path);
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage(String(err && err.message || err)); }
}, workerData.everyMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  try { db.pragma('wal_checkpoint(TRUNCATE)'); } catch {}
  db.close();
  parentPort.postMessage('stopped');
});
`;

export class Checkpointer {
  private readonly worker: Worker;

  constructor(path: string, driverPath: string, everyMs = 1_000, onError: (message: string) => void = () => undefined) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver: driverPath, everyMs } });
    this.worker.on('message', (message: unknown) => {
      if (message !== 'stopped') onError(String(message));
    });
    this.worker.on('error', (err) => onError(err.message));
    this.worker.unref();
  }

  /** A last full checkpoint, then the worker ends. */
  async stop(): Promise<void> {
    const stopped = new Promise<void>((resolve) => {
      this.worker.on('message', (message: unknown) => {
        if (message === 'stopped') resolve();
      });
      this.worker.once('exit', () => resolve());
    });
    this.worker.postMessage('stop');
    await Promise.race([stopped, new Promise((r) => setTimeout(r, 2_000))]);
    await this.worker.terminate();
  }
}
