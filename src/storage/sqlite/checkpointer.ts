/**
 * WAL checkpoints off the event loop. SQLite copies the write-ahead log back into the database
 * file (and syncs it) whenever the log passes 1,000 pages, inside whichever commit crossed the
 * line: on the gateway's thread that stalled every request for tens of milliseconds once a second
 * under load. Here the main connection never checkpoints; a worker thread with a connection of
 * its own (the copier) does, every second, in PASSIVE mode (it never blocks the writer).
 *
 * A PASSIVE checkpoint copies pages but never starts the log over: SQLite rewinds the log only
 * when a write begins after every frame was copied, and under steady load a commit always lands
 * while the checkpoint runs. The log then grows for as long as the load lasts (1.9 GB after 70
 * seconds at 32 connections, with every read searching a longer index). So once the log passes
 * `restartFrames`, the copier asks for a short pause of the store's commits (the write gate), a
 * second worker (the restarter) checkpoints in RESTART mode while no commit can land, and the
 * pause is lifted: the next commit starts the log over, and the file stays at the size it had.
 * Commits wait for the pause (3 to 8 ms here, mostly two fsyncs; TRUNCATE, which also shrinks the
 * file, took 35 ms) while the event loop, unlike a writer spinning in SQLite's busy handler, runs
 * on. Measured at 1,000 requests/s after a minute at 32 connections: the log stays under 70 MB
 * instead of passing 1.9 GB, and the gateway's CPU per request falls by a fifth.
 *
 * The pause lasts until the restarter answers, however long its disk takes: the restart holds the
 * log's write lock from start to end, so a commit let through earlier would wait in SQLite's busy
 * handler on the event loop, stalling every request for the rest of the restart (a stall of a
 * second makes the load shedder refuse the next second's requests). A pause past `slowPauseMs`
 * is reported; the callers of the held commits get their answers after the settlement writer's
 * own wait, as for any slow commit.
 */
import { Worker } from 'node:worker_threads';

/**
 * Two workers, each with a connection of its own. The copier runs the PASSIVE checkpoints at the
 * lowest CPU priority (nice 19, on its own thread only): where the gateway's thread shares a core
 * with it (one core, or a CPU quota of one), a checkpoint at equal priority took turns with the
 * requests for a few milliseconds once a second, which set the p99 at 1,000 requests/s, and at
 * nice 19 the requests come first (bench/HISTORY.md, "So the checkpoint now yields the core").
 * The restarter runs only while commits are paused, so it keeps the normal priority: an
 * unprivileged thread can lower its priority but never raise it again, and a starved restart
 * would hold every commit back.
 */
const COPIER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path);
db.pragma('busy_timeout = 1000');
try {
  // Linux: the nice value is per thread, and /proc/thread-self names this one.
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  require('node:os').setPriority(tid, workerData.copierNice);
} catch {
  // Elsewhere the checkpoints run at the normal priority.
}
let asked = false;
const report = (err) => parentPort.postMessage({ type: 'error', message: String((err && err.message) || err) });
const timer = setInterval(() => {
  if (asked) return;
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result && result.log >= workerData.restartFrames) {
      asked = true;
      parentPort.postMessage({ type: 'pause' });
    }
  } catch (err) { report(err); }
}, workerData.everyMs);
parentPort.on('message', (message) => {
  if (message === 'resumed') {
    asked = false;
    return;
  }
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.postMessage({ type: 'stopped' });
});
`;

const RESTARTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path);
db.pragma('busy_timeout = 1000');
const report = (err) => parentPort.postMessage({ type: 'error', message: String((err && err.message) || err) });
parentPort.on('message', (message) => {
  if (message === 'paused') {
    try { db.pragma('wal_checkpoint(RESTART)'); } catch (err) { report(err); }
    parentPort.postMessage({ type: 'resume' });
    return;
  }
  if (message !== 'stop') return;
  try { db.pragma('wal_checkpoint(TRUNCATE)'); } catch {}
  db.close();
  parentPort.postMessage({ type: 'stopped' });
});
`;

/** Holds the store's own commits back while the log is truncated. */
export interface WriteGate {
  pause(): void;
  resume(): void;
}

export interface CheckpointerOptions {
  everyMs?: number;
  /** Log length (in pages) past which the log is truncated under a pause of the commits. */
  restartFrames?: number;
  /** A pause longer than this is reported (`onError`); the commits still wait for the restart's end. */
  slowPauseMs?: number;
  /** The copier thread's nice value (Linux): 19, the lowest priority, unless a test needs it to keep pace. */
  copierNice?: number;
  onError?: (message: string) => void;
  /** Told, when the store's commits go on again, how long the restart held them (for the metrics). */
  onPauseEnd?: (ms: number) => void;
}

interface WorkerMessage {
  type: 'pause' | 'resume' | 'stopped' | 'error';
  message?: string;
}

export class Checkpointer {
  private readonly copier: Worker;
  private readonly restarter: Worker;
  private gate: WriteGate | null = null;
  private paused = false;
  private restarterGone = false;
  private slowTimer: NodeJS.Timeout | null = null;
  private readonly slowPauseMs: number;
  private readonly onError: (message: string) => void;
  private readonly onPauseEnd: (ms: number) => void;
  private pausedAt = 0;

  constructor(path: string, driverPath: string, options: CheckpointerOptions = {}) {
    const { everyMs = 1_000, restartFrames = 16_384, slowPauseMs = 2_000, copierNice = 19, onError = () => undefined, onPauseEnd = () => undefined } = options;
    this.slowPauseMs = slowPauseMs;
    this.onError = onError;
    this.onPauseEnd = onPauseEnd;
    // `role` tells a driver module which worker loads it: tests stand in one that fails in one of them.
    const workerData = { path, driver: driverPath, everyMs, restartFrames, copierNice };
    this.copier = new Worker(COPIER_SOURCE, { eval: true, workerData: { ...workerData, role: 'copier' } });
    this.restarter = new Worker(RESTARTER_SOURCE, { eval: true, workerData: { ...workerData, role: 'restarter' } });
    for (const worker of [this.copier, this.restarter]) {
      worker.on('message', (message: WorkerMessage) => {
        if (message.type === 'pause') this.pause();
        else if (message.type === 'resume') this.restarted();
        else if (message.type === 'error') onError(message.message ?? 'checkpoint failed');
      });
      worker.on('error', (err) => {
        this.restarted();
        onError(err.message);
      });
      worker.unref();
    }
    // A restarter gone for any reason can no longer end a pause, nor start the log over.
    this.restarter.on('exit', () => {
      this.restarterGone = true;
      this.resume();
    });
  }

  /** The store's commits, paused while the log is truncated; without one, the worker never pauses anything. */
  attach(gate: WriteGate): void {
    this.gate = gate;
  }

  private pause(): void {
    if (this.restarterGone) {
      // Nobody would end the pause: the commits go on, and the log grows between PASSIVE checkpoints.
      this.onError('the write-ahead log cannot be started over: its worker has exited');
      return;
    }
    if (this.gate === null) {
      // Nothing to hold back: truncating then only waits in the worker for a gap between writes.
      this.restarter.postMessage('paused');
      return;
    }
    this.gate.pause();
    this.paused = true;
    const began = performance.now();
    this.pausedAt = began;
    this.slowTimer = setTimeout(() => {
      this.slowTimer = null;
      this.onError(`restarting the write-ahead log has held the store's commits for ${Math.round(performance.now() - began)} ms; they wait for its end (a slow disk?)`);
    }, this.slowPauseMs);
    this.slowTimer.unref();
    // No commit is open here: the store commits synchronously, so none spans this callback.
    this.restarter.postMessage('paused');
  }

  /** The restart is over (or failed): commits go on, and the copier may ask again. */
  private restarted(): void {
    this.resume();
    this.copier.postMessage('resumed');
  }

  private resume(): void {
    if (!this.paused) return;
    this.paused = false;
    if (this.slowTimer !== null) clearTimeout(this.slowTimer);
    this.slowTimer = null;
    // Measured before the held commits run (resume() runs them), and told without letting a
    // fault of the metrics keep the copier from being told the restart is over.
    const ms = performance.now() - this.pausedAt;
    this.gate?.resume();
    try {
      this.onPauseEnd(ms);
    } catch (err) {
      this.onError(`could not report a write pause: ${String(err)}`);
    }
  }

  /** A last full checkpoint, then the workers end. */
  async stop(): Promise<void> {
    this.resume();
    await Promise.all([stopWorker(this.copier), stopWorker(this.restarter)]);
  }
}

async function stopWorker(worker: Worker): Promise<void> {
  // Exited already (its 'exit' came and went): nothing would answer the stop.
  if (worker.threadId === -1) return;
  const stopped = new Promise<void>((resolve) => {
    worker.on('message', (message: WorkerMessage) => {
      if (message.type === 'stopped') resolve();
    });
    worker.once('exit', () => resolve());
  });
  worker.postMessage('stop');
  // Cleared once the worker answers: a pending timer would keep the process alive 2 s after every shutdown.
  let patience: NodeJS.Timeout | undefined;
  await Promise.race([stopped, new Promise((r) => (patience = setTimeout(r, 2_000)))]);
  clearTimeout(patience);
  await worker.terminate();
}
