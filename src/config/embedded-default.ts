/**
 * The configuration `npm start` runs without a file: SQLite under ./data, the built-in mock
 * provider, a mock model for each modality and one tier. The demo account and key are created in the store on
 * first start (see src/app/demo-account.ts), not here, so that the key is random and printed once.
 */
import { validateConfig } from './validate.js';
import type { Config } from './schema.js';

export const DEMO_TIER = 'default';

/** A mock model of one non-chat modality, served by the built-in mock under its own name. */
function mediaModel(id: string, capabilities: string[], price: Record<string, number>): Record<string, unknown> {
  return { id, owned_by: 'tollgate-mock', capabilities, context_window: 8_192, price, routes: [{ provider: 'mock', model: id }] };
}

export function embeddedDefaultConfig(): Config {
  return validateConfig(
    {
      storage: { url: 'sqlite://./data/tollgate.db' },
      providers: [{ id: 'mock', kind: 'mock', mock: { chunk_delay_ms: 20 } }],
      models: [
        {
          id: 'mock-chat',
          owned_by: 'tollgate-mock',
          capabilities: ['chat', 'streaming', 'tools', 'json_mode', 'vision'],
          context_window: 32_768,
          max_output_tokens: 4_096,
          price: { input_per_million_tokens: 0.5, output_per_million_tokens: 1.5 },
          routes: [{ provider: 'mock', model: 'mock-chat' }],
        },
        {
          id: 'mock-mini',
          owned_by: 'tollgate-mock',
          capabilities: ['chat', 'streaming'],
          context_window: 8_192,
          max_output_tokens: 1_024,
          price: { input_per_million_tokens: 0.1, output_per_million_tokens: 0.3 },
          routes: [{ provider: 'mock', model: 'mock-mini' }],
        },
        mediaModel('mock-embed', ['embeddings'], { input_per_million_tokens: 0.02 }),
        mediaModel('mock-image', ['image_generation'], { per_image: 0.04 }),
        mediaModel('mock-tts', ['speech'], { per_audio_second: 0.001 }),
        mediaModel('mock-whisper', ['transcription'], { per_audio_second: 0.0001 }),
        mediaModel('mock-video', ['video'], { per_video_second: 0.1 }),
      ],
      tiers: {
        [DEMO_TIER]: {
          models: ['*'],
          endpoints: ['*'],
          limits: { requests_per_minute: 600, tokens_per_minute: 200_000, daily: { chat: 10_000, images: 1_000, audio: 1_000, video: 100 }, max_in_flight: 16 },
        },
      },
    },
    'embedded default configuration',
  );
}
