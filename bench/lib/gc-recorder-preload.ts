/** Loaded with `--import` into a server under test by `npm run bench -- --tail` (see gc-recorder.ts). */
import { COLLECTIONS_DIR_VARIABLE, collectionsFile, recordCollections } from './gc-recorder.js';

const dir = process.env[COLLECTIONS_DIR_VARIABLE];
if (dir !== undefined) recordCollections(collectionsFile(dir, process.pid));
