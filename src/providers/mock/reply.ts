/**
 * What the mock provider answers: deterministic output derived from the request, so tests can
 * assert exact content and token counts. One word is one completion token.
 */
import type { ChatCompletionRequest, FinishReason, ToolCall } from '../../protocol/chat.js';

export interface MockChoice {
  words: string[];
  toolCall: ToolCall | null;
  finishReason: FinishReason;
}

function lastUserText(request: ChatCompletionRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) return message.content.map((p) => (p.type === 'text' ? p.text : '')).join(' ');
  }
  return '';
}

/** A tool is called when the caller requires it, or (auto) when the last user message names it. */
function chooseTool(request: ChatCompletionRequest, requestId: string): ToolCall | null {
  const tools = request.tools;
  const choice = request.tool_choice ?? 'auto';
  if (!tools || tools.length === 0 || choice === 'none') return null;
  const text = lastUserText(request);
  const lastRole = request.messages[request.messages.length - 1]?.role;
  const tool =
    typeof choice === 'object'
      ? tools.find((t) => t.function.name === choice.function.name)
      : choice === 'required'
        ? tools[0]
        : lastRole === 'user'
          ? tools.find((t) => text.includes(t.function.name))
          : undefined;
  if (!tool) return null;
  return { id: `call_${requestId.slice(-12)}`, type: 'function', function: { name: tool.function.name, arguments: '{}' } };
}

export function mockChoice(request: ChatCompletionRequest, requestId: string, fixedReply: string | undefined): MockChoice {
  const toolCall = chooseTool(request, requestId);
  if (toolCall) return { words: [], toolCall, finishReason: 'tool_calls' };
  const prompt = lastUserText(request).trim().split(/\s+/).filter(Boolean).slice(0, 12).join(' ');
  let text = fixedReply ?? `This is a mock reply to: ${prompt || '(empty prompt)'}`;
  const format = request.response_format?.type;
  if (format === 'json_object' || format === 'json_schema') text = JSON.stringify({ mock: true, reply: text });
  const words = text.split(' ');
  const cap = request.max_completion_tokens ?? request.max_tokens ?? Infinity;
  if (words.length > cap) return { words: words.slice(0, cap), toolCall: null, finishReason: 'length' };
  return { words, toolCall: null, finishReason: 'stop' };
}
