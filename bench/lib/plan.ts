/** What the benchmark runs: the targets and the load scenarios. */
export const TARGET_NAMES = ['direct', 'lower-bound', 'tollgate', 'tollgate-unpriced', 'tollgate-in-memory', 'portkey'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

/**
 * What a plain `npm run bench` measures. Two variants of the real configuration are asked for by
 * name, to be measured interleaved with it in one run: `tollgate-unpriced` (no prices, so no
 * charge to commit before the answer) tells what the charge's commit costs; `tollgate-in-memory`
 * (the SQLite store in memory, so nothing written to a file and nothing to checkpoint) tells what
 * the store's writes to disk cost, apart from the inserts themselves.
 */
export const DEFAULT_TARGETS: readonly TargetName[] = ['direct', 'lower-bound', 'tollgate', 'portkey'];

/** Whether a target is a Tollgate process (and so takes the gateway's model name and key). */
export function isTollgate(name: TargetName): boolean {
  return name === 'tollgate' || name === 'tollgate-unpriced' || name === 'tollgate-in-memory';
}

export interface Scenario {
  id: string;
  title: string;
  connections: number;
  stream: boolean;
  /** Fixed request rate; undefined means as fast as the target goes. */
  rate?: number;
  /** Whether the peer takes part: Portkey 1.15.2 fails every streamed request on Node 20 here. */
  peer: boolean;
}

export const SCENARIOS: Scenario[] = [
  { id: 'c32', title: 'Non-streaming, 32 connections', connections: 32, stream: false, peer: true },
  { id: 'c128', title: 'Non-streaming, 128 connections', connections: 128, stream: false, peer: true },
  { id: 'stream-c32', title: 'Streaming (about 20 chunks), 32 connections', connections: 32, stream: true, peer: false },
  { id: 'rate-1000', title: 'Non-streaming at a fixed 1,000 requests/s', connections: 32, stream: false, rate: 1000, peer: true },
];
