import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../protocol/chat.js';
import { toolCallId } from './gemini/tool-call-id.js';
import { fitsAnthropic, fitsOpenAI, fittedToolCallId, standInToolCallId, withFittedToolCallIds } from './tool-call-id-fit.js';

/** What Gemini 3 makes of a call with a thought signature: far longer than OpenAI takes. */
const GEMINI_ID = toolCallId(Buffer.alloc(300, 7).toString('base64'));

function conversation(callId: string): ChatMessage[] {
  return [
    { role: 'user', content: 'Weather?' },
    { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: callId, content: '18C' },
  ];
}

describe('tool call ids an upstream refuses', () => {
  it('stand-ins are 40 characters every provider takes, the same for the same id, different for others', () => {
    const standIn = standInToolCallId(GEMINI_ID);
    expect(standIn).toHaveLength(40);
    expect(fitsOpenAI(standIn) && fitsAnthropic(standIn)).toBe(true);
    expect(standInToolCallId(GEMINI_ID)).toBe(standIn);
    expect(standInToolCallId(`${GEMINI_ID}x`)).not.toBe(standIn);
  });

  it('keeps ids that fit and replaces the others, per provider', () => {
    expect(GEMINI_ID.length).toBeGreaterThan(40);
    expect(fittedToolCallId('call_abc', fitsOpenAI)).toBe('call_abc');
    expect(fittedToolCallId(GEMINI_ID, fitsOpenAI)).toBe(standInToolCallId(GEMINI_ID));
    // Anthropic takes any length but only [A-Za-z0-9_-]; OpenAI the reverse.
    expect(fittedToolCallId(GEMINI_ID, fitsAnthropic)).toBe(GEMINI_ID);
    expect(fittedToolCallId('functions.get_weather:0', fitsAnthropic)).toBe(standInToolCallId('functions.get_weather:0'));
    expect(fittedToolCallId('functions.get_weather:0', fitsOpenAI)).toBe('functions.get_weather:0');
  });

  it('gives back the same messages when every id fits, and copies with the call and its result still matched when not', () => {
    const fitting = conversation('call_abc');
    expect(withFittedToolCallIds(fitting, fitsOpenAI)).toBe(fitting);
    const long = conversation(GEMINI_ID);
    const fitted = withFittedToolCallIds(long, fitsOpenAI);
    expect(fitted[0]).toBe(long[0]);
    expect(fitted[1]?.tool_calls?.[0]?.id).toBe(standInToolCallId(GEMINI_ID));
    expect(fitted[2]?.tool_call_id).toBe(standInToolCallId(GEMINI_ID));
    // The caller's own request is left as it came (it is recorded and relayed elsewhere).
    expect(long[1]?.tool_calls?.[0]?.id).toBe(GEMINI_ID);
    expect(long[2]?.tool_call_id).toBe(GEMINI_ID);
  });
});
