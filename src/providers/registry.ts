/** The only place that knows every adapter: builds one per configured provider, by kind. */
import type { ProviderConfig } from '../config/schema.js';
import { createAnthropicAdapter } from './anthropic/adapter.js';
import { createGeminiAdapter } from './gemini/adapter.js';
import { createMockAdapter } from './mock/adapter.js';
import { createOpenAIAdapter } from './openai/adapter.js';
import type { AdapterOptions, ProviderAdapter } from './types.js';
import { keepProviderSecrets } from '../errors/index.js';

export function createAdapter(provider: ProviderConfig, options: AdapterOptions): ProviderAdapter {
  // Whatever an upstream echoes of these, no caller sees it (src/errors/secrets.ts).
  keepProviderSecrets(provider.api_key, provider.headers);
  switch (provider.kind) {
    case 'openai':
      return createOpenAIAdapter(provider, options);
    case 'anthropic':
      return createAnthropicAdapter(provider, options);
    case 'gemini':
      return createGeminiAdapter(provider, options);
    case 'mock':
      return createMockAdapter(provider);
  }
}

export function createAdapters(providers: readonly ProviderConfig[], options: AdapterOptions): Map<string, ProviderAdapter> {
  return new Map(providers.map((p) => [p.id, createAdapter(p, options)]));
}
