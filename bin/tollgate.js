#!/usr/bin/env -S node --no-memory-reducer
// Thin launcher: the CLI is compiled TypeScript in dist/ (built by `npm install` / `npm start`).
// --no-memory-reducer: see "After a lull" in the README's Performance section; V8 reads it only
// at start, so it is a command-line flag (here and in `npm start`), not set from code.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : String(err)); process.exitCode = 1; },
);
