/**
 * The OpenAI chat-completions wire format: the lingua franca between callers, the pipeline and
 * every adapter. Adapters for other providers translate to and from these shapes.
 */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPart { type: 'text'; text: string }
export interface ImagePart { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
export interface AudioPart { type: 'input_audio'; input_audio: { data: string; format: 'wav' | 'mp3' } }
export interface FilePart { type: 'file'; file: { file_data?: string; file_id?: string; filename?: string } }
export interface RefusalPart { type: 'refusal'; refusal: string }
export type ContentPart = TextPart | ImagePart | AudioPart | FilePart | RefusalPart;

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  refusal?: string | null;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean | null };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null } };

export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  logit_bias?: Record<string, number> | null;
  logprobs?: boolean | null;
  top_logprobs?: number | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  n?: number | null;
  response_format?: ResponseFormat;
  seed?: number | null;
  stop?: string | string[] | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
  temperature?: number | null;
  top_p?: number | null;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  user?: string;
  /** Fields Tollgate does not know are relayed untouched to OpenAI-compatible upstreams. */
  [extra: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: Record<string, number>;
  completion_tokens_details?: Record<string, number>;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatCompletionChoice {
  index: number;
  message: { role: 'assistant'; content: string | null; tool_calls?: ToolCall[]; refusal?: string | null };
  finish_reason: FinishReason | null;
  logprobs: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage?: Usage;
  system_fingerprint?: string | null;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: { role?: 'assistant'; content?: string | null; tool_calls?: ToolCallDelta[]; refusal?: string | null };
    finish_reason: FinishReason | null;
    logprobs?: unknown;
  }>;
  usage?: Usage | null;
  system_fingerprint?: string | null;
}
