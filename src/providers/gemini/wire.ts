/**
 * The subset of Google's Gemini API (generativelanguage, v1beta REST) wire format this adapter
 * sends and reads. Field names are the REST API's camelCase: the API rejects unknown fields, so a
 * snake_case slip is a 400, not a silently ignored option. Responses are typed loosely and
 * checked field by field before they are trusted.
 */

export interface Blob {
  mimeType: string;
  /** Base64 (standard alphabet). */
  data: string;
}

export interface FunctionCall {
  name: string;
  args?: Record<string, unknown>;
  /** Set by some models; this adapter does not rely on it. */
  id?: string;
}

export interface FunctionResponse {
  name: string;
  /** Must be a JSON object; by convention the result goes under `output`. */
  response: Record<string, unknown>;
}

/** A part carries exactly one kind of data; `thought` and `thoughtSignature` ride along. */
export interface Part {
  text?: string;
  inlineData?: Blob;
  functionCall?: FunctionCall;
  functionResponse?: FunctionResponse;
  /** True on a thought summary (only sent when thoughts are requested). */
  thought?: boolean;
  /** Opaque, base64; Gemini 3 requires it back on function calls in later turns. */
  thoughtSignature?: string;
}

export interface Content {
  role?: 'user' | 'model';
  parts: Part[];
}

export interface FunctionDeclaration {
  name: string;
  description?: string;
  /** Full JSON Schema, as OpenAI callers write it (unlike `parameters`, an OpenAPI subset). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface Tool {
  functionDeclarations: FunctionDeclaration[];
}

export interface ToolConfig {
  functionCallingConfig: {
    mode: 'AUTO' | 'ANY' | 'NONE';
    allowedFunctionNames?: string[];
  };
}

export interface GenerationConfig {
  stopSequences?: string[];
  responseMimeType?: string;
  /** Full JSON Schema (unlike `responseSchema`, an OpenAPI subset). */
  responseJsonSchema?: Record<string, unknown>;
  candidateCount?: number;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
}

export interface GenerateContentRequest {
  contents: Content[];
  systemInstruction?: Content;
  tools?: Tool[];
  toolConfig?: ToolConfig;
  generationConfig?: GenerationConfig;
}

export interface EmbedContentRequest {
  /** `models/{model}`; required inside a batch, where it must match the URL's model. */
  model?: string;
  content: Content;
  outputDimensionality?: number;
}

export interface BatchEmbedContentsRequest {
  requests: EmbedContentRequest[];
}

/** The finish reasons this adapter maps specially; others (newer ones too) end as "stop". */
export type FinishReason =
  | 'STOP'
  | 'MAX_TOKENS'
  | 'SAFETY'
  | 'RECITATION'
  | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT'
  | 'SPII'
  | 'IMAGE_SAFETY'
  | 'IMAGE_PROHIBITED_CONTENT'
  | 'IMAGE_RECITATION'
  | (string & {});
