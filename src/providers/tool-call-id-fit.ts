/**
 * Tool call ids an upstream would refuse. A conversation can carry ids another provider made:
 * Gemini's carry its thought signature (hundreds of characters, see gemini/tool-call-id.ts), and
 * other servers use dots or colons. OpenAI refuses an id longer than 40 characters, Anthropic one
 * with any character outside [A-Za-z0-9_-]; either would turn a failover, or a conversation moved
 * to another model, into a 400. Such an id goes upstream as a stand-in made from its hash: the
 * same id always gives the same stand-in, so a call and its result still match, and the caller's
 * history keeps its own ids (the stand-in is never shown).
 */
import { createHash } from 'node:crypto';
import type { ChatMessage } from '../protocol/chat.js';

/** `call_` and 35 base64url characters (210 bits of the hash): 40 in all, fit for every provider. */
export function standInToolCallId(id: string): string {
  return `call_${createHash('sha256').update(id).digest('base64url').slice(0, 35)}`;
}

export type ToolCallIdRule = (id: string) => boolean;

export const fitsOpenAI: ToolCallIdRule = (id) => id.length <= 40;

const ANTHROPIC_ID = /^[A-Za-z0-9_-]+$/;
export const fitsAnthropic: ToolCallIdRule = (id) => ANTHROPIC_ID.test(id);

/** The id as the upstream takes it. */
export function fittedToolCallId(id: string, fits: ToolCallIdRule): string {
  return fits(id) ? id : standInToolCallId(id);
}

/**
 * The messages with every refused id replaced; the same array when none is (the common case,
 * which costs a look at each message's role).
 */
export function withFittedToolCallIds(messages: ChatMessage[], fits: ToolCallIdRule): ChatMessage[] {
  if (messages.every((msg) => allFit(msg, fits))) return messages;
  return messages.map((msg) => {
    if (allFit(msg, fits)) return msg;
    const fitted: ChatMessage = { ...msg };
    if (msg.tool_calls !== undefined) fitted.tool_calls = msg.tool_calls.map((call) => (fits(call.id) ? call : { ...call, id: standInToolCallId(call.id) }));
    if (typeof msg.tool_call_id === 'string') fitted.tool_call_id = fittedToolCallId(msg.tool_call_id, fits);
    return fitted;
  });
}

function allFit(msg: ChatMessage, fits: ToolCallIdRule): boolean {
  if (msg.role === 'tool') return typeof msg.tool_call_id !== 'string' || fits(msg.tool_call_id);
  if (msg.role !== 'assistant' || !Array.isArray(msg.tool_calls)) return true;
  return msg.tool_calls.every((call) => typeof call.id !== 'string' || fits(call.id));
}
