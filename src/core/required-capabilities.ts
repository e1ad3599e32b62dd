/** The capabilities a chat request needs, each with the request field that needs it. */
import type { Capability } from '../protocol/capabilities.js';
import type { ChatCompletionRequest } from '../protocol/chat.js';

export interface Requirement {
  capability: Capability;
  param: string;
}

function hasImageInput(request: ChatCompletionRequest): number {
  return request.messages.findIndex((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url'));
}

export function requiredCapabilities(request: ChatCompletionRequest): Requirement[] {
  const needs: Requirement[] = [{ capability: 'chat', param: 'messages' }];
  if (request.stream === true) needs.push({ capability: 'streaming', param: 'stream' });
  if (request.tools !== undefined && request.tools.length > 0) needs.push({ capability: 'tools', param: 'tools' });
  const image = hasImageInput(request);
  if (image >= 0) needs.push({ capability: 'vision', param: `messages[${image}].content` });
  const format = request.response_format?.type;
  if (format === 'json_object' || format === 'json_schema') needs.push({ capability: 'json_mode', param: 'response_format' });
  return needs;
}
