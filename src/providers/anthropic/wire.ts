/**
 * The subset of Anthropic's Messages API wire format this adapter sends and reads. Only the
 * fields we use are typed; responses are validated field by field before they are trusted.
 */

export interface TextBlockParam { type: 'text'; text: string }
export type ImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string };
export interface ImageBlockParam { type: 'image'; source: ImageSource }
export interface DocumentBlockParam { type: 'document'; source: { type: 'base64'; media_type: 'application/pdf'; data: string } }
export interface ToolUseBlockParam { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | ImageBlockParam>;
}

export type ContentBlockParam = TextBlockParam | ImageBlockParam | DocumentBlockParam | ToolUseBlockParam | ToolResultBlockParam;

export interface MessageParam {
  role: 'user' | 'assistant';
  content: ContentBlockParam[];
}

export interface ToolParam {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
}

export type ToolChoiceParam =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  tools?: ToolParam[];
  tool_choice?: ToolChoiceParam;
  metadata?: { user_id: string };
  stream?: boolean;
}

/** Token counts as Anthropic reports them; the cache fields are absent on older API versions. */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}
