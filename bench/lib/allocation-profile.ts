/**
 * Where a server's allocations come from, from V8's sampling heap profiler, reached over the
 * inspector of a server started with `--inspect`. Garbage collection is the part of a request's
 * CPU time that no function's self time shows; the bytes each function allocates are what cause
 * it. Objects the collector has already freed are kept in the profile (V8 drops them otherwise,
 * and a request's garbage is nearly all short-lived), so the figures are bytes allocated, not
 * bytes still alive.
 */
import { functionName, placeOf, type CallFrame } from './cpu-profile.js';
import { InspectorSession } from './inspector.js';

/** The parts of a `HeapProfiler.SamplingHeapProfile` (Chrome DevTools protocol) that the tally reads. */
export interface AllocationNode {
  callFrame: CallFrame;
  /** Bytes allocated by this function itself, estimated from the samples (already scaled up). */
  selfSize: number;
  children: AllocationNode[];
}

export interface AllocationProfile {
  head: AllocationNode;
}

export interface AllocatedBytes {
  totalBytes: number;
  /** Bytes each function allocated itself, keyed `name place:line` as in `selfTimes`. */
  byFunction: Map<string, number>;
  /** Bytes allocated by the code of each place (see `placeOf`). */
  byPlace: Map<string, number>;
}

export function allocatedBytes(profile: AllocationProfile, root: string): AllocatedBytes {
  const byFunction = new Map<string, number>();
  const byPlace = new Map<string, number>();
  let totalBytes = 0;
  // A deep call tree would overflow a recursive walk's stack.
  const stack = [profile.head];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    for (const child of node.children) stack.push(child);
    if (node.selfSize === 0) continue;
    const frame = node.callFrame;
    const place = placeOf(frame, root);
    const name = functionName(frame, place);
    totalBytes += node.selfSize;
    byFunction.set(name, (byFunction.get(name) ?? 0) + node.selfSize);
    byPlace.set(place, (byPlace.get(place) ?? 0) + node.selfSize);
  }
  return { totalBytes, byFunction, byPlace };
}

/**
 * Records the allocations of the process whose inspector listens on `inspectorPort` while `work`
 * runs. `intervalBytes`: the mean bytes between two samples (V8's default is 32,768; a smaller
 * interval sees more of the small allocations a request makes, at more cost).
 */
export async function allocationsWhile<T>(inspectorPort: number, intervalBytes: number, work: () => Promise<T>): Promise<{ profile: AllocationProfile; result: T }> {
  const session = await InspectorSession.connect(inspectorPort);
  try {
    await session.call('HeapProfiler.enable');
    await session.call('HeapProfiler.startSampling', {
      samplingInterval: intervalBytes,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    const result = await work();
    const stopped = (await session.call('HeapProfiler.stopSampling')) as { profile: AllocationProfile };
    return { profile: stopped.profile, result };
  } finally {
    session.close();
  }
}
