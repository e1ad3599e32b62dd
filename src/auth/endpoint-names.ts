/**
 * The names tiers and key scopes give endpoints (`tiers.NAME.endpoints`, `scope.endpoints`), one
 * per route family. A list none of whose entries matches any of them is refused where it is
 * written (configuration, admin API): it would refuse every request silently. An entry that
 * matches nothing beside others that do is harmless (a shared list naming an endpoint this
 * gateway lacks) and is taken.
 */
import { GlobList } from '../util/glob.js';

export const ENDPOINT_NAMES = [
  'chat/completions',
  'responses',
  'embeddings',
  'images/generations',
  'images/edits',
  'audio/speech',
  'audio/transcriptions',
  'audio/translations',
  'files',
  'videos',
  'assets',
  'models',
] as const;

export type EndpointName = (typeof ENDPOINT_NAMES)[number];

export function isEndpointName(name: string): name is EndpointName {
  return (ENDPOINT_NAMES as readonly string[]).includes(name);
}

/** Whether a list of globs (an empty one too) matches none of `names`: a scope of it would refuse everything. */
export function matchesNone(globs: readonly string[], names: readonly string[]): boolean {
  const list = new GlobList(globs);
  return !names.some((name) => list.matches(name));
}
