/**
 * A redis-server of a test file's own, on a free port, without persistence: tests that need Redis
 * to go away and come back start and kill it (never the machine's shared server). Under CI=true a
 * missing redis-server fails the file instead of skipping it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { Redis } from 'ioredis';

/** Why redis-server cannot be used here, or null when it can. */
export function redisServerMissing(): string | null {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (probe.error !== undefined) return `redis-server cannot be spawned (${probe.error.message})`;
  if (probe.status !== 0) return `redis-server --version exited with status ${String(probe.status)}: ${probe.stderr.trim()}`;
  return null;
}

/**
 * `redisServerMissing()` for a test file: throws under CI=true (the tests must run there), else
 * warns and returns the reason, for `describe.skip`.
 */
export function privateRedisMissing(file: string): string | null {
  const missing = redisServerMissing();
  if (missing === null) return null;
  if (process.env.CI === 'true') throw new Error(`a private redis-server is required under CI=true: ${missing}`);
  console.warn(`${file}: skipped because ${missing}`);
  return missing;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every 20 ms until it holds, or fails after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** One command against a Redis through a connection of its own, which never retries. */
export async function withRedis<T>(url: string, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** A redis-server of this file's own, on a fixed port, without persistence. */
export class PrivateRedis {
  private child: ChildProcess | null = null;
  private output = '';

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.output = '';
    const child = spawn('redis-server', ['--port', String(this.port), '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], {
      cwd: tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.on('error', (err) => (this.output += `\nspawn error: ${err.message}`));
    this.child = child;
    await until(
      async () => {
        if (!this.running) throw new Error(`redis-server on port ${this.port} exited at start:\n${this.output}`);
        return withRedis(this.url, async (redis) => (await redis.ping()) === 'PONG').catch(() => false);
      },
      5000,
      `redis-server on port ${this.port} to answer PING`,
    );
  }

  /** Kills the server the hard way (a crash, not a shutdown) and waits for it to be gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child === null || !this.running) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  /** For process exit: no waiting possible. */
  killNow(): void {
    if (this.running) this.child?.kill('SIGKILL');
  }
}
