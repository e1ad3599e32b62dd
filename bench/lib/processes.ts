/**
 * Server processes for the benchmark: started pinned to a core when taskset exists, waited for
 * until they accept connections, and measured from /proc (CPU time, resident size).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

export const HAS_TASKSET = spawnSync('taskset', ['-V']).status === 0;
const HAS_NICE = spawnSync('nice', ['true']).status === 0;
const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim()) || 100;

export interface Server {
  name: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Every server started, so that an error or an interrupt anywhere still stops them all. */
const started = new Set<ChildProcess>();
function killAll(): void {
  for (const child of started) if (child.exitCode === null) child.kill('SIGKILL');
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}

export async function startServer(name: string, port: number, command: string[], options: { core?: number; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<Server> {
  const [exe, ...args] = HAS_TASKSET && options.core !== undefined ? ['taskset', '-c', String(options.core), ...command] : command;
  const child = spawn(exe as string, args, { env: { ...process.env, ...options.env }, cwd: options.cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const deadline = Date.now() + 30_000;
  while (!(await accepts(port))) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) throw new Error(`${name} did not listen on ${port}: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    port,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}

/**
 * A process that is not a server (the cache neighbour), started on `core` when taskset exists,
 * at the lowest priority when `nice` does; stopped with the others if the bench exits early.
 */
export function startBackground(command: string[], core: number | undefined): { stop: () => void } {
  const niced = HAS_NICE ? ['nice', '-n', '19', ...command] : command;
  const [exe, ...args] = HAS_TASKSET && core !== undefined ? ['taskset', '-c', String(core), ...niced] : niced;
  const child = spawn(exe as string, args, { stdio: 'ignore' });
  started.add(child);
  child.once('exit', () => started.delete(child));
  return { stop: () => void child.kill('SIGKILL') };
}

/** A port nothing listens on now, for a server about to start. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** CPU time of a process, all threads, in seconds: in user space (the server's JavaScript, V8, its native code) and in the kernel (system calls, the network stack). */
export interface CpuTimes {
  user: number;
  system: number;
}

/**
 * The pid whose CPU counts: under taskset the child is taskset itself until it execs node, which
 * keeps the pid, so the child's pid is the server's.
 */
export function cpuTimes(pid: number): CpuTimes {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat; after the command name they are at 11 and 12.
  return { user: Number(fields[11]) / TICKS_PER_SECOND, system: Number(fields[12]) / TICKS_PER_SECOND };
}

export function cpuSeconds(pid: number): number {
  const { user, system } = cpuTimes(pid);
  return user + system;
}

export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : 0;
}

/**
 * Read and write system calls the process has made, all threads together (`syscr` + `syscw` of
 * /proc/PID/io: read, pread, readv, recv; write, pwrite, writev, send), or NaN where the kernel
 * does not tell. Unlike CPU time it does not move with the machine's noise, so it shows what a
 * server adds per request at the system level (SQLite's log writes, say) steadily between runs.
 */
export function systemCalls(pid: number): number {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const read = /^syscr: (\d+)$/m.exec(io);
    const write = /^syscw: (\d+)$/m.exec(io);
    return read && write ? Number(read[1]) + Number(write[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** Total CPU of a process and its descendants (Portkey is a node process under npx-like wrappers). */
export function treeCpuSeconds(pid: number): number {
  let total = cpuSeconds(pid);
  for (const child of childPids(pid)) total += treeCpuSeconds(child);
  return total;
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
