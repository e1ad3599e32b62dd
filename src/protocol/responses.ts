/**
 * OpenAI's Responses API (`POST /v1/responses`), the shapes Tollgate serves: a request is turned
 * into a chat completion request, and the completion (or its stream) back into a response. Function
 * tools only: no hosted tools.
 */

export interface ResponseOutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
}

export interface ResponseRefusal {
  type: 'refusal';
  refusal: string;
}

export interface ResponseMessageItem {
  type: 'message';
  id: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: Array<ResponseOutputText | ResponseRefusal>;
}

export interface ResponseFunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: 'in_progress' | 'completed' | 'incomplete';
}

export type ResponseOutputItem = ResponseMessageItem | ResponseFunctionCallItem;

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete';
  error: null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  model: string;
  output: ResponseOutputItem[];
  usage: ResponseUsage | null;
  /** The request's own settings, echoed as OpenAI echoes them. */
  [echoed: string]: unknown;
}
