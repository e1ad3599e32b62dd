#!/usr/bin/env node
// Thin launcher: the CLI is compiled TypeScript in dist/ (built by `npm install` / `npm start`).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code; },
  (err) => { console.error(err instanceof Error ? err.message : String(err)); process.exitCode = 1; },
);
