/**
 * Micro-benchmark of validateChatRequest on a typical request (5 messages, a tool, a few sampling
 * parameters). Run with `npx vitest bench --run src/validation`. Not part of `vitest run`.
 */
import { bench, describe } from 'vitest';
import { validateChatRequest } from './chat-request.js';

const typicalRequest = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant. Answer briefly and cite sources when you can.' },
    { role: 'user', content: 'What is the weather like in Oslo today, and should I bring an umbrella?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_abc123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
    },
    { role: 'tool', tool_call_id: 'call_abc123', content: '{"temperature_c": 4, "precipitation_mm": 2.5, "summary": "light rain"}' },
    { role: 'user', content: [{ type: 'text', text: 'Thanks! And tomorrow?' }] },
  ],
  temperature: 0.7,
  max_completion_tokens: 512,
  stream: true,
  stream_options: { include_usage: true },
  tools: [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Current weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      },
    },
  ],
  tool_choice: 'auto',
  user: 'user-1234',
};

const typicalJson = JSON.stringify(typicalRequest);

describe('validateChatRequest', () => {
  bench('typical 5-message request', () => {
    validateChatRequest(typicalRequest);
  });
  bench('same, after JSON.parse (what the HTTP layer does)', () => {
    validateChatRequest(JSON.parse(typicalJson));
  });
  bench('JSON.parse alone, for scale', () => {
    JSON.parse(typicalJson);
  });
});
