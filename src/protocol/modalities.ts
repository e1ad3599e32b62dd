import type { Capability } from './capabilities.js';

/** The kinds of work a request does; each has its own daily cap and price unit. */
export const MODALITIES = ['chat', 'embeddings', 'images', 'audio', 'video'] as const;

export type Modality = (typeof MODALITIES)[number];

const MODALITY_OF: ReadonlyArray<readonly [Capability, Modality]> = [
  ['chat', 'chat'],
  ['embeddings', 'embeddings'],
  ['image_generation', 'images'],
  ['speech', 'audio'],
  ['transcription', 'audio'],
  ['video', 'video'],
];

/** The modality a model mainly serves: the first of its capabilities that names one. */
export function primaryModality(capabilities: ReadonlySet<Capability>): Modality {
  for (const [capability, modality] of MODALITY_OF) if (capabilities.has(capability)) return modality;
  return 'chat';
}
