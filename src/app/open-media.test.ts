import { describe, expect, it } from 'vitest';
import { parseConfigText } from '../config/load.js';
import { localBlobsWarning } from './open-media.js';

const providers = `
providers: [{ id: mock, kind: mock }]
models: [{ id: m, capabilities: [chat], context_window: 8192, routes: [{ provider: mock, model: m }] }]
tiers: { free: { models: ["*"] } }
`;
const config = (yaml: string) => parseConfigText(yaml + providers, 'test.yaml', {});

describe('localBlobsWarning', () => {
  it('warns when blobs stay on local disk while storage is PostgreSQL (instances would not share them)', () => {
    expect(localBlobsWarning(config('storage: { url: "postgres://127.0.0.1:5432/test" }\n'))).toContain('set blobs.backend to postgres');
  });

  it('is silent with SQLite storage, or with blobs in PostgreSQL', () => {
    expect(localBlobsWarning(config('storage: { url: "sqlite://./data/x.db" }\n'))).toBeNull();
    expect(localBlobsWarning(config('storage: { url: "postgres://127.0.0.1:5432/test" }\nblobs: { backend: postgres }\n'))).toBeNull();
  });
});
