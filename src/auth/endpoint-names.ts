/**
 * The names tiers and key scopes give endpoints (`tiers.NAME.endpoints`, `scope.endpoints`), one
 * per route family. A name or glob that matches none of them is refused where it is written
 * (configuration, admin API): in a scope it would refuse every request silently.
 */
import { GlobList } from '../util/glob.js';

export const ENDPOINT_NAMES = [
  'chat/completions',
  'responses',
  'embeddings',
  'images/generations',
  'audio/speech',
  'audio/transcriptions',
  'files',
  'videos',
  'assets',
  'models',
] as const;

export type EndpointName = (typeof ENDPOINT_NAMES)[number];

export function isEndpointName(name: string): name is EndpointName {
  return (ENDPOINT_NAMES as readonly string[]).includes(name);
}

/** The index of the first of `globs` that matches none of `names`, or -1. */
export function firstGlobMatchingNone(globs: readonly string[], names: readonly string[]): number {
  return globs.findIndex((glob) => !names.some((name) => new GlobList([glob]).matches(name)));
}
