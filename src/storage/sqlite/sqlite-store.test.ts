import { storeConformance } from '../store.conformance.js';
import { openStore } from '../open-store.js';

storeConformance('SQLite', () => openStore('sqlite://:memory:'));
