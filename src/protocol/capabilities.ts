/** What a model can do and what an adapter implements, named the same way on both sides. */
export const CAPABILITIES = [
  'chat',
  'streaming',
  'tools',
  'vision',
  'json_mode',
  'embeddings',
  'image_generation',
  'speech',
  'transcription',
  'video',
] as const;

export type Capability = (typeof CAPABILITIES)[number];
