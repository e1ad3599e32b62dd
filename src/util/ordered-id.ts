/**
 * Ids that grow with time: 12 hex digits of Unix milliseconds first, so that rows keyed by them
 * land at the end of their index instead of on random pages (fewer pages written per commit).
 */
import { randomBytes, randomUUID } from 'node:crypto';

let lastMs = -1;
let lastHex = '';

/** The current millisecond in hex, converted once per millisecond (a radix conversion is slow in V8). */
function timeHex(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastHex = ms.toString(16).padStart(12, '0');
  }
  return lastHex;
}

/**
 * 32 hex digits: time, then 20 random hex digits (from randomUUID, which draws from a buffered
 * pool instead of asking the system for every id). Unpredictable, unique across instances.
 */
export function timeOrderedRandomHex(): string {
  const uuid = randomUUID();
  // The UUID's version and variant digits (positions 14 and 19) are constant: left out.
  return `${timeHex()}${uuid.slice(0, 8)}${uuid.slice(9, 13)}${uuid.slice(15, 18)}${uuid.slice(20, 23)}${uuid.slice(24, 26)}`;
}

/**
 * Time-ordered ids for rows that no caller needs to guess or hide (ledger entries): time, a
 * per-process sequence, and a random suffix drawn once per 65,536 ids. Unique across instances
 * by the suffix and within one by time and sequence; no system call per id.
 */
export class SequentialIds {
  private sequence = 0;
  private suffix = randomBytes(8).toString('hex');

  constructor(private readonly prefix: string) {}

  next(): string {
    this.sequence = (this.sequence + 1) & 0xffff;
    if (this.sequence === 0) this.suffix = randomBytes(8).toString('hex');
    return `${this.prefix}${timeHex()}${this.sequence.toString(16).padStart(4, '0')}${this.suffix}`;
  }
}
