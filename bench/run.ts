/**
 * `npm run bench`: what Tollgate adds to every request, measured against the lower bound (a
 * minimal node:http + undici proxy), a peer (the Portkey gateway) and the mock upstream alone,
 * all in one run because these machines are shared and noisy: only ratios within a run compare,
 * and the targets' ratios are taken within each repetition (the targets measured back to back)
 * before their median (lib/report.ts).
 *
 * Options: --duration S (per run, default 8), --reps N (default 3), --warm-up S (load on each
 * target before measuring, default 12), --targets a,b (subset of
 * direct,lower-bound,tollgate,tollgate-unpriced,tollgate-in-memory,portkey; all but the two Tollgate
 * variants by default),
 * --scenarios a,b, --soak [--minutes M] (memory over time at 1,000 requests/s instead of the
 * matrix, default 10 minutes), --instructions (main-thread instructions per request under
 * callgrind, lower bound against Tollgate: steady on a noisy machine; --requests N, --warmup N;
 * --scenarios stream-c32 for streamed requests), --profile (where the CPU time of the lower bound
 * and Tollgate goes, from V8's sampling profiler: self time per request by place and by function,
 * for each closed-loop scenario asked for), --allocations (the same for the bytes allocated, from
 * V8's sampling heap profiler: what the garbage collector's time comes from), --tail (what the
 * slowest 1% of requests at 1,000 requests/s met: a garbage collection, the checkpoint threads'
 * writes, or neither), --out DIR (default bench/results).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { HAS_TASKSET, cpuTimes, freePort, residentBytes, startBackground, startServer, systemCalls, type Server } from './lib/processes.js';
import { describeStatuses, runLoad, type LoadResult } from './lib/load.js';
import { runFixedRate } from './lib/fixed-rate.js';
import { ensurePortkey, PORTKEY_VERSION } from './lib/peer.js';
import { fmt, median, ratio } from './lib/stats.js';
import { DEFAULT_TARGETS, SCENARIOS, TARGET_NAMES, isTollgate, type Scenario, type TargetName } from './lib/plan.js';
import { renderMarkdown, type Report, type Row } from './lib/report.js';
import { coreTicks, stolenShare } from './lib/steal.js';
import { perRequest, profileWhile, selfTimes } from './lib/cpu-profile.js';
import { COLLECTIONS_DIR_VARIABLE, collectionsFile, readCollections } from './lib/gc-recorder.js';
import { ThreadWrites, type Span } from './lib/thread-writes.js';
import { AFTER_COLLECTION_MS, NEAR_WRITES_MS, tailSources, type TimedRequest } from './lib/tail.js';
import { allocatedBytes, allocationsWhile } from './lib/allocation-profile.js';
import { HAS_CALLGRIND, countInstructions, type InstructionResult } from './lib/instructions.js';

const ROOT = resolve(import.meta.dirname, '..');
const BENCH_DIST = resolve(import.meta.dirname);
const SERVER_CORE = 1;
/**
 * Node's flags for the servers under test, Tollgate's as `npm start` and the `tollgate` command
 * pass them. V8's memory reducer, once a process has been quiet for some seconds, collects to
 * shrink the heap, and the request path has to be optimised again when load returns: each target
 * waits while the others are measured, so without the flag every measurement of Tollgate began
 * with seconds of recompiling on its one core ("After a lull" in the README). Without the reducer
 * V8 collects the old generation only once it has grown several times over (the soak's resident
 * size rose 25%), hence the second flag: collect it once it has grown by half of what the last
 * collection kept. The lower bound runs with the same flags, so that the comparison stays like for
 * like.
 */
const SERVER_NODE_FLAGS = ['--no-memory-reducer', '--heap-growing-percent=50'];
const LOAD_CORE = 0;
/** The cache neighbour's buffer: several times any cache of the machines it runs on. */
const NEIGHBOUR_MEBIBYTES = 256;

const USAGE = `usage: npm run bench -- [options]
  --duration S      seconds per measured run (default 8)
  --reps N          repetitions per scenario and target; the table shows medians (default 3)
  --targets LIST    of ${TARGET_NAMES.join(', ')} (default: ${DEFAULT_TARGETS.join(', ')})
  --scenarios LIST  of ${SCENARIOS.map((s) => s.id).join(', ')} (default: all)
  --soak            resident memory of Tollgate at 1,000 requests/s instead of the matrix
  --minutes N       length of --soak (default 10)
  --instructions    CPU per request in instructions, under valgrind's callgrind, for the first
                    closed-loop scenario in --scenarios (c32 unless told: --scenarios stream-c32)
  --requests N      measured requests per target with --instructions (default 1000)
  --warmup N        warm-up requests per target with --instructions (default 3000)
  --profile         where the CPU time of the lower bound and Tollgate goes (V8's sampling profiler,
                    after the warm-up): self time per request by place and by function, for each
                    closed-loop scenario in --scenarios, and a .cpuprofile for Chrome DevTools each
  --allocations     the same for the bytes allocated a request (V8's sampling heap profiler, freed
                    objects included), and a .heapprofile for Chrome DevTools each
  --tail            what the slowest 1% of requests at 1,000 requests/s met, for the lower bound and
                    Tollgate in turn after the usual warm-up (one run of --duration seconds each):
                    a garbage collection, the writes of the server's other threads (Tollgate's
                    checkpoints), or neither
  --warm-up S       seconds of load each target gets before the matrix is measured (default 12)
  --neighbour       the matrix with a noisy neighbour: a process on the load generator's core, at
                    the lowest priority, that keeps evicting the shared cache (another guest's
                    busy moment, made on purpose)
  --out DIR         where the Markdown and JSON results go (default bench/results)`;

function parseOptions() {
  try {
    return parseArgs({
      options: {
        duration: { type: 'string', default: '8' },
        reps: { type: 'string', default: '3' },
        targets: { type: 'string', default: DEFAULT_TARGETS.join(',') },
        scenarios: { type: 'string', default: SCENARIOS.map((s) => s.id).join(',') },
        soak: { type: 'boolean', default: false },
        minutes: { type: 'string', default: '10' },
        instructions: { type: 'boolean', default: false },
        profile: { type: 'boolean', default: false },
        allocations: { type: 'boolean', default: false },
        tail: { type: 'boolean', default: false },
        requests: { type: 'string', default: '1000' },
        warmup: { type: 'string', default: '3000' },
        'warm-up': { type: 'string', default: '12' },
        neighbour: { type: 'boolean', default: false },
        out: { type: 'string', default: join(ROOT, 'bench', 'results') },
        help: { type: 'boolean', default: false },
      },
      allowPositionals: false,
    }).values;
  } catch (err) {
    return refuse((err as Error).message);
  }
}

const values = parseOptions();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
refuseUnknown('targets', values.targets, TARGET_NAMES);
refuseUnknown('scenarios', values.scenarios, SCENARIOS.map((s) => s.id));
if (values.neighbour && (values.soak || values.instructions || values.profile || values.allocations || values.tail)) refuse('--neighbour goes with the matrix only');
if (values.tail && (values.soak || values.instructions || values.profile || values.allocations)) refuse('--tail goes alone, not with --soak, --instructions, --profile or --allocations');
for (const name of ['duration', 'reps', 'minutes', 'requests', 'warmup', 'warm-up'] as const) {
  if (!(Number(values[name]) > 0)) refuse(`--${name} must be a positive number, not "${values[name]}"`);
}

function refuse(message: string): never {
  console.error(`bench: ${message}\n${USAGE}`);
  process.exit(2);
}

function refuseUnknown(option: string, list: string, known: readonly string[]): void {
  const unknown = list.split(',').filter((name) => !known.includes(name));
  if (unknown.length > 0) refuse(`--${option}: unknown ${unknown.join(', ')} (known: ${known.join(', ')})`);
}

function generateKey(): string {
  const out = spawnSync(process.execPath, [join(ROOT, 'bin', 'tollgate.js'), 'keys', 'generate'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`tollgate keys generate failed: ${out.stderr}`);
  return out.stdout.trim();
}

/**
 * A realistic configuration: key auth, all four limits set high enough never to bite, two routes.
 * `name` keeps each Tollgate's files apart and picks the variant: `tollgate-unpriced` has no
 * prices, so its requests commit no charge before their answer (their usage records are still
 * written, in batches); `tollgate-in-memory` keeps its SQLite store in memory (the same inserts
 * and commits, no file to write).
 */
function tollgateConfig(dir: string, upstream: string, name: TargetName, server = ''): string {
  const priced = name !== 'tollgate-unpriced';
  const onDisk = name !== 'tollgate-in-memory';
  const path = join(dir, `${name}.bench.yaml`);
  writeFileSync(
    path,
    `${server}storage: { url: "sqlite://${onDisk ? join(dir, `${name}.db`) : ':memory:'}" }
log: { level: info, requests: true }
providers:
  - { id: upstream-a, kind: openai, base_url: "${upstream}/v1", api_key: bench-upstream-key }
  - { id: upstream-b, kind: openai, base_url: "${upstream}/v1", api_key: bench-upstream-key }
models:
  - id: bench-model
    capabilities: [chat, streaming, tools, json_mode]
    context_window: 128000
    max_output_tokens: 4096
${priced ? '    price: { input_per_million_tokens: 0.15, output_per_million_tokens: 0.6 }\n' : ''}    routes: [{ provider: upstream-a, model: bench-upstream }, { provider: upstream-b, model: bench-upstream }]
tiers:
  bench:
    models: ["*"]
    limits: { requests_per_minute: 100000000, tokens_per_minute: 10000000000, daily: { chat: 1000000000 }, max_in_flight: 100000 }
accounts:
  - id: bench
    tier: bench
    credits: 1000000000
    keys: [{ key: "\${TOLLGATE_BENCH_KEY}" }]
`,
  );
  return path;
}

interface Target {
  name: TargetName;
  server: Server;
  url: string;
  headers: Record<string, string>;
}

/** `flagsFor`: Node flags a target's server gets besides the usual ones (the profilers' `--inspect`, --tail's recorder). */
async function startTargets(names: TargetName[], dir: string, flagsFor: (name: TargetName) => string[] = () => []): Promise<{ mock: Server; targets: Target[] }> {
  const node = process.execPath;
  const mockPort = await freePort();
  // The mock upstream shares the load generator's core, so the server under test has a core alone.
  const mock = await startServer('mock upstream', mockPort, [node, join(BENCH_DIST, 'servers', 'mock-upstream.js'), String(mockPort)], { core: LOAD_CORE });
  const upstream = `http://127.0.0.1:${mockPort}`;
  const targets: Target[] = [];
  for (const name of names) {
    if (name === 'direct') {
      targets.push({ name, server: mock, url: `${upstream}/v1/chat/completions`, headers: {} });
    } else if (name === 'lower-bound') {
      const port = await freePort();
      const server = await startServer(name, port, [node, ...SERVER_NODE_FLAGS, ...flagsFor(name), join(BENCH_DIST, 'servers', 'lower-bound.js'), String(port), upstream], { core: SERVER_CORE });
      targets.push({ name, server, url: `http://127.0.0.1:${port}/v1/chat/completions`, headers: {} });
    } else if (isTollgate(name)) {
      const port = await freePort();
      const key = generateKey();
      const config = tollgateConfig(dir, upstream, name);
      const server = await startServer(name, port, [node, ...SERVER_NODE_FLAGS, ...flagsFor(name), join(ROOT, 'bin', 'tollgate.js'), 'serve', '--config', config, '--port', String(port)], {
        core: SERVER_CORE,
        env: { TOLLGATE_BENCH_KEY: key },
        cwd: dir,
      });
      targets.push({ name, server, url: `http://127.0.0.1:${port}/v1/chat/completions`, headers: { authorization: `Bearer ${key}` } });
    } else {
      const entry = ensurePortkey(join(ROOT, 'bench'));
      const port = await freePort();
      const server = await startServer(name, port, [node, entry, `--port=${port}`, '--headless'], { core: SERVER_CORE, env: { NODE_ENV: 'production' } });
      targets.push({
        name,
        server,
        url: `http://127.0.0.1:${port}/v1/chat/completions`,
        headers: { authorization: 'Bearer bench-upstream-key', 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstream}/v1` },
      });
    }
  }
  return { mock, targets };
}

function inspectorFlag(port: number | undefined): string[] {
  return port === undefined ? [] : [`--inspect=127.0.0.1:${port}`];
}

function body(scenario: Scenario, target: TargetName): string {
  return JSON.stringify({
    model: isTollgate(target) ? 'bench-model' : 'bench-upstream',
    messages: [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'Write one sentence about foxes.' }],
    max_tokens: 64,
    ...(scenario.stream ? { stream: true } : {}),
  });
}

type Sample = LoadResult & { cpuMicros: number; userMicros: number; syscalls: number; stealPct: number };

async function measure(target: Target, scenario: Scenario, seconds: number): Promise<Sample> {
  const pid = target.server.child.pid as number;
  const core = HAS_TASKSET ? SERVER_CORE : undefined;
  let ticks = coreTicks(core);
  let before = cpuTimes(pid);
  let callsBefore = systemCalls(pid);
  const spec = { url: target.url, headers: target.headers, body: body(scenario, target.name), connections: scenario.connections, durationSeconds: seconds };
  // A fixed-rate run warms its connections up first; CPU and steal count from the measured part.
  const onMeasuring = (): void => {
    ticks = coreTicks(core);
    before = cpuTimes(pid);
    callsBefore = systemCalls(pid);
  };
  const result = scenario.rate !== undefined ? await runFixedRate({ ...spec, rate: scenario.rate, onMeasuring }) : await runLoad(spec);
  const after = cpuTimes(pid);
  const user = after.user - before.user;
  const cpu = user + after.system - before.system;
  const calls = systemCalls(pid) - callsBefore;
  const stealPct = stolenShare(ticks, coreTicks(core)) * 100;
  const perRequest = (total: number): number => (result.requests > 0 ? total / result.requests : NaN);
  return { ...result, cpuMicros: perRequest(cpu * 1e6), userMicros: perRequest(user * 1e6), syscalls: perRequest(calls), stealPct };
}

/**
 * Load before measuring, on every target alike: V8 takes about ten seconds of traffic to finish
 * optimising a server as large as Tollgate (its compiler threads count in the CPU figure), and a
 * gateway in production runs for hours, not seconds. Streaming code is warmed too when a
 * streaming scenario follows.
 */
async function warmUp(target: Target, scenarios: Scenario[], seconds: number): Promise<void> {
  const streamed = scenarios.find((s) => s.stream && (s.peer || target.name !== 'portkey'));
  await measure(target, SCENARIOS[0] as Scenario, streamed === undefined ? seconds : seconds / 2);
  if (streamed !== undefined) await measure(target, streamed, seconds / 2);
}

async function matrix(): Promise<number> {
  const names = values.targets.split(',').filter((n): n is TargetName => (TARGET_NAMES as readonly string[]).includes(n));
  const scenarios = SCENARIOS.filter((s) => values.scenarios.split(',').includes(s.id));
  const seconds = Number(values.duration);
  const reps = Number(values.reps);
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  console.log(`bench: ${names.join(', ')} × ${scenarios.map((s) => s.id).join(', ')}, ${reps} × ${seconds} s each`);
  console.log(HAS_TASKSET ? `bench: taskset present: servers under test pinned to core ${SERVER_CORE}, load generator and mock upstream to core ${LOAD_CORE}` : 'bench: taskset not found: processes are not pinned');
  const { mock, targets } = await startTargets(names, dir);
  if (values.neighbour) console.log(`bench: the cache neighbour runs on core ${LOAD_CORE} at the lowest priority, over ${NEIGHBOUR_MEBIBYTES} MiB`);
  const neighbour = values.neighbour ? startBackground([process.execPath, join(BENCH_DIST, 'servers', 'cache-neighbour.js'), String(NEIGHBOUR_MEBIBYTES)], HAS_TASKSET ? LOAD_CORE : undefined) : null;
  const rows: Row[] = [];
  let errors = 0;
  try {
    for (const target of targets) await warmUp(target, scenarios, Number(values['warm-up']));
    for (const scenario of scenarios) {
      const samples = new Map<TargetName, Sample[]>();
      // Repetitions interleave the targets, so that noise on the machine spreads over all of them.
      for (let rep = 0; rep < reps; rep++) {
        for (const target of targets) {
          if (target.name === 'portkey' && !scenario.peer) continue;
          const sample = await measure(target, scenario, seconds);
          samples.set(target.name, [...(samples.get(target.name) ?? []), sample]);
          if (sample.errors + sample.non2xx > 0) {
            errors += sample.errors + sample.non2xx;
            console.error(`bench: ${target.name} answered ${sample.non2xx} non-2xx (${describeStatuses(sample.statuses) || 'none'}) and ${sample.errors} errors in ${scenario.id}`);
          }
          console.log(`  ${scenario.id} rep ${rep + 1} ${target.name}: ${fmt(sample.rps)} req/s, p99 ${fmt(sample.p99, 2)} ms, ${fmt(sample.cpuMicros)} µs CPU/req (${fmt(sample.userMicros)} user), ${fmt(sample.syscalls, 1)} syscalls/req, ${fmt(sample.stealPct, 1)}% stolen`);
        }
      }
      for (const [target, list] of samples) {
        rows.push({
          scenario: scenario.id,
          target,
          rps: median(list.map((s) => s.rps)),
          p50: median(list.map((s) => s.p50)),
          p90: median(list.map((s) => s.p90)),
          p99: median(list.map((s) => s.p99)),
          cpuMicros: median(list.map((s) => s.cpuMicros)),
          userMicros: median(list.map((s) => s.userMicros)),
          syscalls: median(list.map((s) => s.syscalls)),
          stealPct: median(list.map((s) => s.stealPct)),
          errors: list.reduce((sum, s) => sum + s.errors + s.non2xx, 0),
          repetitions: list.map((s) => ({ rps: s.rps, cpuMicros: s.cpuMicros, p99: s.p99 })),
        });
      }
    }
  } finally {
    neighbour?.stop();
    for (const target of targets) if (target.server !== mock) await target.server.stop();
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const report: Report = {
    date: new Date().toISOString(),
    machine: machineDescription(),
    pinned: HAS_TASKSET,
    ...(values.neighbour ? { neighbour: true } : {}),
    durationSeconds: seconds,
    repetitions: reps,
    peer: `@portkey-ai/gateway ${PORTKEY_VERSION}`,
    rows,
  };
  writeReport(report);
  if (errors > 0) {
    console.error(`bench: ${errors} requests failed; the figures above are not valid`);
    return 1;
  }
  return 0;
}

function machineDescription(): string {
  const cpu = spawnSync('sh', ['-c', "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"], { encoding: 'utf8' }).stdout.trim();
  return `${cpu || 'unknown CPU'}, ${spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()} cores, Node ${process.version}`;
}

function writeReport(report: Report): void {
  mkdirSync(values.out, { recursive: true });
  const markdown = renderMarkdown(report);
  const stamp = report.date.replace(/[:.]/g, '-');
  writeFileSync(join(values.out, `bench-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(values.out, `bench-${stamp}.md`), markdown);
  writeFileSync(join(values.out, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(values.out, 'latest.md'), markdown);
  console.log(`\n${markdown}\nbench: written to ${values.out}`);
}

/** Resident memory of Tollgate over a long run at 1,000 requests/s. */
async function soak(minutes: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-soak-'));
  const { mock, targets } = await startTargets(['tollgate'], dir);
  const target = targets[0] as Target;
  const pid = target.server.child.pid as number;
  const scenario = SCENARIOS.find((s) => s.id === 'rate-1000') as Scenario;
  const slice = 30;
  const samples: Array<{ second: number; rssMiB: number; rps: number; p99: number }> = [];
  let errors = 0;
  try {
    // Each slice also runs the fixed-rate driver's warm-up, so the seconds are counted as they pass.
    const began = performance.now();
    for (let counted = 0; counted < minutes * 60; counted += slice) {
      const result = await measure(target, scenario, slice);
      errors += result.errors + result.non2xx;
      const second = Math.round((performance.now() - began) / 1000);
      samples.push({ second, rssMiB: residentBytes(pid) / 2 ** 20, rps: result.rps, p99: result.p99 });
      console.log(`  soak ${second}s: rss ${fmt(samples.at(-1)?.rssMiB, 1)} MiB, ${fmt(result.rps)} req/s, p99 ${fmt(result.p99, 2)} ms`);
    }
  } finally {
    await target.server.stop();
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  // The first minute is warm-up (JIT, pools, caches). Resident size swings with every major GC,
  // so growth compares the mean of the last three samples with the mean of the first three after
  // warm-up: a leak shows as a trend, a GC as a swing.
  const settled = samples.filter((s) => s.second > 60).map((s) => s.rssMiB);
  const mean = (values: number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  const early = mean(settled.slice(0, 3));
  const late = mean(settled.slice(-3));
  const growth = ratio(late - early, early) ?? 0;
  const flat = growth <= 0.1;
  const low = Math.min(...settled);
  const high = Math.max(...settled);
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'soak-latest.json'), `${JSON.stringify({ date: new Date().toISOString(), minutes, samples, growth, flat }, null, 2)}\n`);
  console.log(`soak: resident size after warm-up between ${fmt(low, 1)} and ${fmt(high, 1)} MiB; growth from the first to the last samples ${fmt(growth * 100, 1)}%: ${flat ? 'flat' : 'NOT flat'} (limit 10%)`);
  return errors > 0 || !flat ? 1 : 0;
}

/** Main-thread instructions per request, lower bound against Tollgate, each under callgrind. */
async function instructionCount(): Promise<number> {
  if (!HAS_CALLGRIND) {
    console.error('bench: --instructions needs valgrind (callgrind and callgrind_control)');
    return 1;
  }
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-instructions-'));
  const node = process.execPath;
  const mockPort = await freePort();
  const mock = await startServer('mock upstream', mockPort, [node, join(BENCH_DIST, 'servers', 'mock-upstream.js'), String(mockPort)], { core: LOAD_CORE });
  const upstream = `http://127.0.0.1:${mockPort}`;
  // The first closed-loop scenario asked for: c32 by default, stream-c32 for streaming.
  const c32 = SCENARIOS[0] as Scenario;
  const scenario = SCENARIOS.find((s) => s.rate === undefined && values.scenarios.split(',').includes(s.id)) ?? c32;
  const common = { path: '/v1/chat/completions', connections: 8, warmupRequests: Number(values.warmup), requests: Number(values.requests), idleSeconds: 10, settleSeconds: 3, outDir: dir };
  const results: InstructionResult[] = [];
  const names = values.targets.split(',');
  try {
    if (names.includes('lower-bound')) {
      const lowerPort = await freePort();
      console.log('bench: counting the lower bound\'s instructions under callgrind (a few minutes)');
      results.push(
        await countInstructions({ ...common, name: 'lower-bound', command: [node, ...SERVER_NODE_FLAGS, join(BENCH_DIST, 'servers', 'lower-bound.js'), String(lowerPort), upstream], port: lowerPort, headers: {}, body: body(scenario, 'lower-bound') }),
      );
    }
    for (const name of TARGET_NAMES.filter((n) => isTollgate(n) && names.includes(n))) {
      const port = await freePort();
      const key = generateKey();
      // Under valgrind a pause of seconds is normal: the load shedder must not take it for overload.
      const config = tollgateConfig(dir, upstream, name, 'server: { max_event_loop_delay_ms: 600000 }\n');
      console.log(`bench: counting ${name}'s instructions under callgrind (a few minutes)`);
      results.push(
        await countInstructions({
          ...common,
          name,
          command: [node, ...SERVER_NODE_FLAGS, join(ROOT, 'bin', 'tollgate.js'), 'serve', '--config', config, '--port', String(port)],
          env: { TOLLGATE_BENCH_KEY: key },
          cwd: dir,
          port,
          headers: { authorization: `Bearer ${key}` },
          body: body(scenario, name),
        }),
      );
    }
  } finally {
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const lower = results.find((r) => r.name === 'lower-bound');
  const tollgate = results.find((r) => r.name === 'tollgate');
  const report = {
    date: new Date().toISOString(),
    machine: machineDescription(),
    scenario: scenario.id,
    connections: common.connections,
    warmupRequests: common.warmupRequests,
    requests: common.requests,
    results,
    ratio: ratio(tollgate?.perRequest, lower?.perRequest),
  };
  mkdirSync(values.out, { recursive: true });
  writeFileSync(join(values.out, 'instructions-latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  for (const r of results) console.log(`  ${r.name}: ${fmt(r.perRequest / 1000, 1)} k instructions/request on the event-loop thread (idle: ${fmt(r.idlePerSecond / 1e6, 1)} M/s), ${r.failed} failed`);
  console.log(`bench: Tollgate / lower bound, instructions per request: ${fmt(report.ratio, 2)}× (${common.requests} ${scenario.stream ? 'streamed' : 'non-streaming'} requests at ${common.connections} connections after ${common.warmupRequests} to warm up)`);
  return results.some((r) => r.failed > 0) ? 1 : 0;
}

/** Microseconds between the profiler's samples: ten times V8's default, for more samples in a short run. */
const PROFILE_INTERVAL_MICROS = 100;

/** Mean bytes between the heap profiler's samples: a thirty-second of V8's default, to see a request's small allocations. */
const ALLOCATION_INTERVAL_BYTES = 1_024;
/**
 * Handing a profile over stops the server for over a second (an allocation profile of 45 MB is
 * serialised on its event loop). Tollgate's load shedder reads that as overload and refuses new
 * requests until its next reading, a second later: the next profile waits that out rather than
 * record 503s.
 */
const AFTER_PROFILE_MS = 2_000;

/**
 * Where the CPU time (or, with --allocations, the allocations) of the lower bound and of Tollgate
 * goes in each closed-loop scenario asked for: V8's sampling profiler over one run of --duration
 * seconds after the usual warm-up.
 */
async function profiles(kind: 'cpu' | 'allocations'): Promise<number> {
  const option = kind === 'cpu' ? '--profile' : '--allocations';
  const names = values.targets.split(',').filter((n): n is TargetName => n === 'lower-bound' || isTollgate(n as TargetName));
  const scenarios = SCENARIOS.filter((s) => s.rate === undefined && values.scenarios.split(',').includes(s.id));
  if (names.length === 0) refuse(`${option} profiles lower-bound and the Tollgate targets; --targets names none of them`);
  if (scenarios.length === 0) refuse(`${option} needs a closed-loop scenario (c32, c128 or stream-c32) in --scenarios`);
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-profile-'));
  const inspect = new Map<TargetName, number>();
  let started: { mock: Server; targets: Target[] } | undefined;
  let errors = 0;
  try {
    for (const name of names) inspect.set(name, await freePort());
    started = await startTargets(names, dir, (name) => inspectorFlag(inspect.get(name)));
    const { targets } = started;
    mkdirSync(values.out, { recursive: true });
    for (const target of targets) await warmUp(target, scenarios, Number(values['warm-up']));
    for (const scenario of scenarios) {
      for (const target of targets) {
        const port = inspect.get(target.name) as number;
        const run = (): Promise<Sample> => measure(target, scenario, Number(values.duration));
        const { failed, requests } = kind === 'cpu' ? await cpuProfile(target, scenario, port, run) : await allocationProfile(target, scenario, port, run);
        errors += failed;
        if (requests === 0) errors++;
        await sleep(AFTER_PROFILE_MS);
      }
    }
  } finally {
    if (started !== undefined) {
      for (const target of started.targets) if (target.server !== started.mock) await target.server.stop();
      await started.mock.stop();
    }
    rmSync(dir, { recursive: true, force: true });
  }
  if (errors > 0) console.error(`bench: ${errors} requests failed while profiling`);
  return errors > 0 ? 1 : 0;
}

interface Profiled {
  failed: number;
  requests: number;
}

async function cpuProfile(target: Target, scenario: Scenario, port: number, run: () => Promise<Sample>): Promise<Profiled> {
  const { profile, result } = await profileWhile(port, PROFILE_INTERVAL_MICROS, run);
  const file = join(values.out, `profile-${target.name}-${scenario.id}.cpuprofile`);
  writeFileSync(file, JSON.stringify(profile));
  const times = selfTimes(profile, ROOT);
  const busy = (times.totalMicros - times.idleMicros) / result.requests;
  // Sampled time is wall-clock time: a thread that waited for the core counts as busy in it, where /proc counts CPU only.
  console.log(
    `\n${scenario.id}, ${target.name}: ${fmt(result.rps)} requests/s under the profiler; ${fmt(busy, 1)} µs sampled a request outside idle (${fmt((100 * times.idleMicros) / times.totalMicros, 1)}% idle), ${fmt(result.cpuMicros, 1)} µs of CPU a request in /proc (all threads); ${file}`,
  );
  console.log('  self time a request, by place:');
  for (const [place, micros] of perRequest(times.byPlace, result.requests, 15)) console.log(`  ${fmt(micros, 2).padStart(8)} µs  ${place}`);
  console.log('  self time a request, by function:');
  for (const [name, micros] of perRequest(times.byFunction, result.requests, 25)) console.log(`  ${fmt(micros, 2).padStart(8)} µs  ${name}`);
  return { failed: result.errors + result.non2xx, requests: result.requests };
}

async function allocationProfile(target: Target, scenario: Scenario, port: number, run: () => Promise<Sample>): Promise<Profiled> {
  const { profile, result } = await allocationsWhile(port, ALLOCATION_INTERVAL_BYTES, run);
  const file = join(values.out, `allocations-${target.name}-${scenario.id}.heapprofile`);
  writeFileSync(file, JSON.stringify(profile));
  const bytes = allocatedBytes(profile, ROOT);
  const kib = (n: number): string => fmt(n / 1024, 2).padStart(8);
  console.log(`\n${scenario.id}, ${target.name}: ${fmt(result.rps)} requests/s under the profiler; ${kib(bytes.totalBytes / result.requests).trim()} KiB allocated a request; ${file}`);
  console.log('  allocated a request, by place:');
  for (const [place, n] of perRequest(bytes.byPlace, result.requests, 15)) console.log(`  ${kib(n)} KiB  ${place}`);
  console.log('  allocated a request, by function:');
  for (const [name, n] of perRequest(bytes.byFunction, result.requests, 25)) console.log(`  ${kib(n)} KiB  ${name}`);
  return { failed: result.errors + result.non2xx, requests: result.requests };
}

/**
 * --tail: the lower bound and Tollgate in turn at 1,000 requests/s, each after the usual warm-up,
 * and what the slowest 1% of each run met (lib/tail.ts). The servers record their collections
 * through a preload (lib/gc-recorder.ts); their other threads' writes are sampled from /proc.
 */
async function tail(): Promise<number> {
  const names = values.targets.split(',').filter((n): n is TargetName => n === 'lower-bound' || isTollgate(n as TargetName));
  if (names.length === 0) refuse('--tail measures lower-bound and the Tollgate targets; --targets names none of them');
  const scenario = SCENARIOS.find((s) => s.id === 'rate-1000') as Scenario;
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-tail-'));
  // Inherited by the servers started below; only those given the preload read it.
  process.env[COLLECTIONS_DIR_VARIABLE] = dir;
  const preload = ['--import', join(BENCH_DIST, 'lib', 'gc-recorder-preload.js')];
  let started: { mock: Server; targets: Target[] } | undefined;
  let errors = 0;
  try {
    started = await startTargets(names, dir, () => preload);
    for (const target of started.targets) await warmUp(target, [scenario], Number(values['warm-up']));
    for (const target of started.targets) {
      const pid = target.server.child.pid as number;
      const requests: TimedRequest[] = [];
      const writes = new ThreadWrites(pid);
      writes.start();
      let result: LoadResult;
      let written: Span[] = [];
      try {
        result = await runFixedRate({
          url: target.url,
          headers: target.headers,
          body: body(scenario, target.name),
          connections: scenario.connections,
          durationSeconds: Number(values.duration),
          rate: scenario.rate as number,
          onSample: (sentAt, ms) => requests.push({ sentAt, ms }),
        });
      } finally {
        written = writes.stop();
      }
      errors += result.errors + result.non2xx;
      // The recorder writes twice a second: wait for what it holds.
      await new Promise((r) => setTimeout(r, 700));
      const t = tailSources(requests, readCollections(collectionsFile(dir, pid)), written);
      const pct = (share: number): string => `${fmt(share * 100, 1)}%`;
      console.log(`\n${scenario.id}, ${target.name}: p99 ${fmt(t.p99, 2)} ms over ${fmt(t.requests)} requests; ${fmt(t.collections)} garbage collections meanwhile (${fmt(t.scavenges)} young-generation scavenges), ${fmt(t.meanCollectionMs, 2)} ms each on average`);
      console.log(`  of the ${fmt(t.slowest)} slowest: ${fmt(t.collection)} in flight during a collection or sent within ${AFTER_COLLECTION_MS} ms of its end (${pct(t.allCollection)} of all requests were)`);
      console.log(`  ${fmt(t.writes)} of the rest sent within ${NEAR_WRITES_MS} ms of another thread's writes (${pct(t.allWrites)} of all requests were), ${fmt(t.neither)} near neither`);
    }
  } finally {
    if (started !== undefined) {
      for (const target of started.targets) await target.server.stop();
      await started.mock.stop();
    }
    rmSync(dir, { recursive: true, force: true });
  }
  if (errors > 0) console.error(`bench: ${errors} requests failed`);
  return errors > 0 ? 1 : 0;
}

const code = values.instructions
  ? await instructionCount()
  : values.profile
    ? await profiles('cpu')
    : values.allocations
      ? await profiles('allocations')
      : values.tail
        ? await tail()
        : values.soak
          ? await soak(Number(values.minutes))
          : await matrix();
process.exit(code);
