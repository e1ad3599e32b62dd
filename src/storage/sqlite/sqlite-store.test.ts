import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { storeConformance } from '../store.conformance.js';
import { openStore } from '../open-store.js';

// In memory: writes on the gateway's thread. In a file: writes in the writer thread.
storeConformance('SQLite in memory', () => openStore('sqlite://:memory:'));

const dir = mkdtempSync(join(tmpdir(), 'tollgate-sqlite-'));
let n = 0;
storeConformance('SQLite file', () => openStore(`sqlite://${join(dir, `store-${n++}.db`)}`));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
