#!/usr/bin/env -S node --no-memory-reducer --heap-growing-percent=50
// Thin launcher: the CLI is compiled TypeScript in dist/ (built by `npm install` / `npm start`).
// The V8 flags: see "After a lull" in the README's Performance section. V8 reads the first when
// it creates the heap, so they are command-line flags (here and in `npm start`), not set in code.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : String(err)); process.exitCode = 1; },
);
