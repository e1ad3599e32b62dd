/**
 * Where a server's CPU time goes, from V8's sampling profiler, reached over the inspector
 * protocol of a server started with `--inspect`. Only the steady state is recorded: the profiler
 * starts after the warm-up, so start-up, module loading and the first compilations are not in it
 * (with `--cpu-prof` they are, and they blur a per-request figure). Time is self time (what a
 * function spent in its own code), divided by the requests answered while the profiler ran.
 */
import { InspectorSession } from './inspector.js';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** The parts of a `Profiler.Profile` (Chrome DevTools protocol) that the tally reads. */
export interface CpuProfile {
  nodes: Array<{ id: number; callFrame: CallFrame }>;
  /** Microseconds, on the profiler's clock. */
  startTime: number;
  endTime: number;
  samples: number[];
  /** Microseconds from the sample before to this one; the first is from `startTime`. */
  timeDeltas: number[];
}

export interface SelfTimes {
  /** Microseconds sampled in all, idle included. */
  totalMicros: number;
  /** Microseconds the thread waited for events (V8's "(idle)"). */
  idleMicros: number;
  /** Self time of each function, keyed `name place:line`; idle time is in neither map. */
  byFunction: Map<string, number>;
  /** Self time of each place: a package, a file of the project, a Node module, native code, or one of V8's own categories. */
  byPlace: Map<string, number>;
}

/**
 * Where a frame's code lives, short: `undici` or `@scope/name` for a package, the path under
 * `root` for a file of the project, `node:events` for Node's own code, `(native)` for a native
 * function called from JavaScript (a system call's wrapper, an addon's method), and V8's names for
 * time outside JavaScript: `(garbage collector)`, `(program)` (native code that no JavaScript frame
 * called), `(idle)`.
 */
export function placeOf(frame: CallFrame, root: string): string {
  const url = frame.url.startsWith('file://') ? frame.url.slice('file://'.length) : frame.url;
  if (url === '') return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules !== -1) {
    const parts = url.slice(modules + '/node_modules/'.length).split('/');
    return (parts[0] ?? '').startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
  }
  const prefix = root.endsWith('/') ? root : `${root}/`;
  return url.startsWith(prefix) ? url.slice(prefix.length) : url;
}

/** How a function is named in the tallies: `name place:line`, `name (native)`, or V8's own category. */
export function functionName(frame: CallFrame, place: string): string {
  if (frame.url !== '') return `${frame.functionName || '(anonymous)'} ${place}:${frame.lineNumber + 1}`;
  return place === '(native)' ? `${frame.functionName || '(anonymous)'} (native)` : place;
}

export function selfTimes(profile: CpuProfile, root: string): SelfTimes {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  const byNode = new Map<number, number>();
  let totalMicros = 0;
  // A sample stands for the time from it to the next one (the last: to the profile's end), as
  // DevTools counts it; the time before the first sample belongs to none.
  const count = profile.samples.length;
  let lastAt = profile.startTime;
  for (let i = 0; i < count; i++) lastAt += profile.timeDeltas[i] ?? 0;
  for (let i = 0; i < count; i++) {
    const micros = i < count - 1 ? (profile.timeDeltas[i + 1] ?? 0) : Math.max(0, profile.endTime - lastAt);
    const id = profile.samples[i] as number;
    totalMicros += micros;
    byNode.set(id, (byNode.get(id) ?? 0) + micros);
  }
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let idleMicros = 0;
  for (const [id, micros] of byNode) {
    const frame = frames.get(id);
    if (frame === undefined) continue;
    const place = placeOf(frame, root);
    if (place === '(idle)') {
      idleMicros += micros;
      continue;
    }
    const name = functionName(frame, place);
    byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    byPlace.set(place, (byPlace.get(place) ?? 0) + micros);
  }
  return { totalMicros, idleMicros, byFunction, byPlace };
}

/** The `top` largest entries, per request, largest first: `[key, microseconds per request]`. */
export function perRequest(times: Map<string, number>, requests: number, top: number): Array<[string, number]> {
  return [...times]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, micros]) => [key, micros / requests]);
}

/**
 * Records the CPU profile of the process whose inspector listens on `inspectorPort` while `work`
 * runs. `intervalMicros`: the sampling interval (V8's default is 1,000; 100 gives ten times the
 * samples for a few percent of overhead).
 */
export async function profileWhile<T>(inspectorPort: number, intervalMicros: number, work: () => Promise<T>): Promise<{ profile: CpuProfile; result: T }> {
  const session = await InspectorSession.connect(inspectorPort);
  try {
    await session.call('Profiler.enable');
    await session.call('Profiler.setSamplingInterval', { interval: intervalMicros });
    await session.call('Profiler.start');
    const result = await work();
    const stopped = (await session.call('Profiler.stop')) as { profile: CpuProfile };
    return { profile: stopped.profile, result };
  } finally {
    session.close();
  }
}
