/**
 * The JSON Schema (as TypeBox) of a chat-completions request, following OpenAI's documented types
 * and ranges. Cross-field rules (which JSON Schema expresses badly) live in chat-request.ts.
 *
 * Unknown fields are allowed everywhere and kept untouched: at the top level because they are relayed
 * to OpenAI-compatible upstreams, and inside known objects (messages, content parts, tools,
 * response_format, ...) for the same reason: OpenAI adds fields over time and compatible providers
 * accept extensions (e.g. `cache_control` on a content part, `reasoning_content` on an assistant
 * message). Adapters read only the fields they know, so an unknown inner field is ignored by
 * Tollgate, never rejected.
 *
 * Optional fields typed without `| null` in src/protocol/chat.ts (response_format, tools,
 * tool_choice, parallel_tool_calls, user) reject null, so the result conforms to that type.
 */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { ChatCompletionRequest } from '../protocol/chat.js';
import { AnyObject, Dict, Discriminated, Nullable, StringEnum } from './schema-helpers.js';

/** Function and json_schema names, as OpenAI documents them. */
const FunctionName = Type.String({
  pattern: '^[a-zA-Z0-9_-]{1,64}$',
  expected: 'a name of 1 to 64 letters, digits, underscores or dashes',
});

// ---- content parts ---------------------------------------------------------------------------

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const ImagePart = Type.Object({
  type: Type.Literal('image_url'),
  image_url: Type.Object({ url: Type.String(), detail: Type.Optional(StringEnum(['auto', 'low', 'high'])) }),
});
const AudioPart = Type.Object({
  type: Type.Literal('input_audio'),
  input_audio: Type.Object({ data: Type.String(), format: StringEnum(['wav', 'mp3']) }),
});
const FilePart = Type.Object({
  type: Type.Literal('file'),
  file: Type.Object({
    file_data: Type.Optional(Type.String()),
    file_id: Type.Optional(Type.String()),
    filename: Type.Optional(Type.String()),
  }),
});
const RefusalPart = Type.Object({ type: Type.Literal('refusal'), refusal: Type.String() });

const Parts = <const T extends readonly TObject[]>(branches: T, role: string) =>
  Type.Array(Discriminated('type', branches, { expected: 'a content part object', note: `content parts of ${role} messages` }), {
    minItems: 1,
  });

const TextContent = (role: string) =>
  Type.Union([Type.String(), Parts([TextPart], role)], { expected: 'a string or an array of content parts' });

// ---- messages --------------------------------------------------------------------------------

// Objects with a `type` of which only "function" is supported are Discriminated on it too, so that
// e.g. a "custom" tool is told its type is wrong rather than that `function` is missing.

const ToolCall = Discriminated(
  'type',
  [Type.Object({ id: Type.String(), type: Type.Literal('function'), function: Type.Object({ name: Type.String(), arguments: Type.String() }) })],
  { expected: 'a tool call object' },
);

const SystemMessage = Type.Object({
  role: StringEnum(['system', 'developer']),
  content: TextContent('system and developer'),
  name: Type.Optional(Type.String()),
});

const UserMessage = Type.Object({
  role: Type.Literal('user'),
  content: Type.Union([Type.String(), Parts([TextPart, ImagePart, AudioPart, FilePart], 'user')], {
    expected: 'a string or an array of content parts',
  }),
  name: Type.Optional(Type.String()),
});

/** `content` may be absent or null only with `tool_calls`: checked in chat-request.ts. */
const AssistantMessage = Type.Object({
  role: Type.Literal('assistant'),
  content: Type.Optional(
    Type.Union([Type.String(), Parts([TextPart, RefusalPart], 'assistant'), Type.Null()], {
      expected: 'a string, an array of content parts, or null',
    }),
  ),
  name: Type.Optional(Type.String()),
  tool_calls: Type.Optional(Type.Array(ToolCall, { minItems: 1 })),
  refusal: Type.Optional(Nullable(Type.String())),
});

const ToolMessage = Type.Object({
  role: Type.Literal('tool'),
  content: TextContent('tool'),
  tool_call_id: Type.String(),
});

const Message = Discriminated('role', [SystemMessage, UserMessage, AssistantMessage, ToolMessage], {
  expected: 'a message object',
  rejected: {
    function:
      'it is the legacy function-calling role; send a function\'s result as a "tool" message with the tool_call_id of the call',
  },
});

// ---- tools and response formats --------------------------------------------------------------

const FunctionTool = Discriminated(
  'type',
  [
    Type.Object({
      type: Type.Literal('function'),
      function: Type.Object({
        name: FunctionName,
        description: Type.Optional(Type.String()),
        parameters: Type.Optional(AnyObject({ expected: 'a JSON Schema object' })),
        strict: Type.Optional(Nullable(Type.Boolean())),
      }),
    }),
  ],
  { expected: 'a tool object' },
);

const ToolChoice = Type.Union(
  [
    StringEnum(['none', 'auto', 'required']),
    Discriminated('type', [Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String() }) })]),
  ],
  { expected: '"none", "auto", "required" or an object {"type": "function", "function": {"name": ...}}' },
);

const ResponseFormat = Discriminated(
  'type',
  [
    Type.Object({ type: Type.Literal('text') }),
    Type.Object({ type: Type.Literal('json_object') }),
    Type.Object({
      type: Type.Literal('json_schema'),
      json_schema: Type.Object({
        name: FunctionName,
        description: Type.Optional(Type.String()),
        schema: Type.Optional(AnyObject({ expected: 'a JSON Schema object' })),
        strict: Type.Optional(Nullable(Type.Boolean())),
      }),
    }),
  ],
  { expected: 'an object such as {"type": "json_object"}' },
);

// ---- the request -----------------------------------------------------------------------------

const Penalty = Nullable(Type.Number({ minimum: -2, maximum: 2 }));
const TokenCount = Nullable(Type.Integer({ minimum: 1 }));

export const ChatRequestSchema = Type.Object({
  model: Type.String({ minLength: 1 }),
  messages: Type.Array(Message, { minItems: 1, expected: 'an array of message objects' }),
  frequency_penalty: Type.Optional(Penalty),
  presence_penalty: Type.Optional(Penalty),
  logit_bias: Type.Optional(
    Nullable(
      Dict(Type.Number({ minimum: -100, maximum: 100 }), {
        expected: 'an object mapping token ids to numbers',
        propertyNames: { pattern: '^[0-9]{1,10}$', expected: 'token ids (whole numbers, such as "50256")' },
      }),
    ),
  ),
  logprobs: Type.Optional(Nullable(Type.Boolean())),
  top_logprobs: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 20 }))),
  max_tokens: Type.Optional(TokenCount),
  max_completion_tokens: Type.Optional(TokenCount),
  n: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 128 }))),
  response_format: Type.Optional(ResponseFormat),
  seed: Type.Optional(Nullable(Type.Integer())),
  stop: Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 4 }), Type.Null()], {
      expected: 'a string, an array of 1 to 4 strings, or null',
    }),
  ),
  stream: Type.Optional(Nullable(Type.Boolean())),
  stream_options: Type.Optional(Nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean()) }))),
  temperature: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 2 }))),
  top_p: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
  tools: Type.Optional(Type.Array(FunctionTool, { maxItems: 128, expected: 'an array of tool objects' })),
  tool_choice: Type.Optional(ToolChoice),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  user: Type.Optional(Type.String()),
  // Newer fields, validated when present.
  store: Type.Optional(Nullable(Type.Boolean())),
  metadata: Type.Optional(
    Nullable(
      Dict(Type.String({ maxLength: 512 }), {
        maxProperties: 16,
        propertyNames: { maxLength: 64, expected: 'at most 64 characters long' },
        expected: 'an object of string values',
      }),
    ),
  ),
  reasoning_effort: Type.Optional(Nullable(StringEnum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']))),
  service_tier: Type.Optional(Nullable(Type.String())),
});

export type ValidChatRequest = Static<typeof ChatRequestSchema>;

/** Compile-time proof that what the schema admits is a ChatCompletionRequest. */
type Conforms<T extends ChatCompletionRequest> = T;
export type _SchemaConformsToProtocol = Conforms<ValidChatRequest>;
