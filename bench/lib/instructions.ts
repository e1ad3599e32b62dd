/**
 * CPU per request counted in instructions rather than seconds. On a shared virtual machine the
 * time a request costs moves by tens of percent from one run to the next (steal, cache pollution
 * by neighbours), more than most single changes; the number of instructions the event-loop thread
 * executes for the same requests does not. Each server runs under valgrind's callgrind, is warmed
 * up until its code is optimised, then its counters cover an idle pause (its timers alone) and a
 * fixed number of requests plus the seconds after them in which deferred work (usage records, the
 * access log) is written; what the timers cost meanwhile is taken off, because under valgrind a
 * second holds about fifty times fewer requests than on the real machine. Both windows start
 * after a pause, so that work deferred by the requests before them is not counted in them.
 *
 * Counts only user-space instructions of the main thread: system calls, the kernel's network and
 * disk work, and V8's background threads (compiler, GC helpers) are not in it. Compare ratios.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';

export const HAS_CALLGRIND = spawnSync('valgrind', ['--version']).status === 0 && spawnSync('callgrind_control', ['-h']).status !== null;

export interface InstructionSpec {
  name: string;
  /** The server's command line; it must listen on `port`. */
  command: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  port: number;
  path: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  warmupRequests: number;
  requests: number;
  idleSeconds: number;
  /** Before each window, for deferred work to end, and after the requests, for theirs to be counted. */
  settleSeconds: number;
  outDir: string;
}

export interface InstructionResult {
  name: string;
  requests: number;
  /** Main-thread instructions per request, the idle timers' share taken off. */
  perRequest: number;
  /** Main-thread instructions per second while idle (timers, samplers). */
  idlePerSecond: number;
  failed: number;
}

export async function countInstructions(spec: InstructionSpec): Promise<InstructionResult> {
  const out = join(spec.outDir, `${spec.name}.callgrind`);
  const child = spawn(
    'valgrind',
    ['--tool=callgrind', '--separate-threads=yes', '--smc-check=all-non-file', `--callgrind-out-file=${out}`, ...spec.command],
    { env: { ...process.env, ...spec.env }, cwd: spec.cwd, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  try {
    await waitForPort(spec.port, child, () => stderr);
    const pool = new Pool(`http://127.0.0.1:${spec.port}`, { connections: spec.connections });
    try {
      let failed = await drive(pool, spec, spec.warmupRequests);
      await sleep(spec.settleSeconds);
      control(child.pid as number, '-z');
      const idleStart = performance.now();
      await sleep(spec.idleSeconds);
      const idleSeconds = (performance.now() - idleStart) / 1000;
      control(child.pid as number, '-d');
      await sleep(spec.settleSeconds);
      control(child.pid as number, '-z');
      const loadStart = performance.now();
      failed += await drive(pool, spec, spec.requests);
      await sleep(spec.settleSeconds);
      const loadSeconds = (performance.now() - loadStart) / 1000;
      control(child.pid as number, '-d');
      const [idle, load] = mainThreadDumps(spec.outDir, `${spec.name}.callgrind`);
      const idlePerSecond = idle / idleSeconds;
      return { name: spec.name, requests: spec.requests, perRequest: (load - idlePerSecond * loadSeconds) / spec.requests, idlePerSecond, failed };
    } finally {
      await pool.close();
    }
  } finally {
    child.kill('SIGKILL');
  }
}

function sleep(seconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

async function drive(pool: Pool, spec: InstructionSpec, count: number): Promise<number> {
  let sent = 0;
  let failed = 0;
  const worker = async (): Promise<void> => {
    while (sent < count) {
      sent++;
      const res = await pool.request({ method: 'POST', path: spec.path, headers: { 'content-type': 'application/json', ...spec.headers }, body: spec.body });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: spec.connections }, worker));
  return failed;
}

function control(pid: number, flag: '-z' | '-d'): void {
  const result = spawnSync('callgrind_control', [flag, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`callgrind_control ${flag} failed: ${result.stderr}`);
}

/** The event-loop thread's totals of the two dumps, in order: idle, then load. */
function mainThreadDumps(dir: string, base: string): [number, number] {
  // With --separate-threads, dump N of thread T is `<base>.N-TT`; thread 1 is the main thread.
  const totals = (n: number): number => {
    const text = readFileSync(join(dir, `${base}.${n}-01`), 'utf8');
    const match = /^(?:summary|totals): (\d+)/m.exec(text);
    if (match === null) throw new Error(`no totals in the callgrind dump ${base}.${n}-01`);
    return Number(match[1]);
  };
  const dumps = readdirSync(dir).filter((f) => f.startsWith(`${base}.`) && f.endsWith('-01'));
  if (dumps.length < 2) throw new Error(`expected two callgrind dumps for ${base}, found ${dumps.length}`);
  return [totals(1), totals(2)];
}

async function waitForPort(port: number, child: ReturnType<typeof spawn>, stderr: () => string): Promise<void> {
  // A server starts under valgrind in tens of seconds.
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode} under valgrind: ${stderr()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/`);
      await res.arrayBuffer();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`server did not listen on ${port} under valgrind: ${stderr()}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
