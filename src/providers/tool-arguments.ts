/**
 * A tool call's arguments as the providers that store them as an object take them (Anthropic's
 * `input`, Gemini's `args`): the caller's JSON text, parsed. The adapter serialises the object
 * again into the upstream request, so text nested deeper than the gateway accepts in a body is
 * refused here too: it would overflow the stack there, a 500 after admission.
 */
import { GatewayError } from '../errors/index.js';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../util/json-depth.js';

export function parseToolArguments(text: string, param: string): Record<string, unknown> {
  // Some clients send "" for a call without arguments; that means "no arguments", not an error.
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new GatewayError('invalid_parameter', 'Tool call arguments must be a JSON object; they could not be parsed as JSON.', { param });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('invalid_parameter', 'Tool call arguments must be a JSON object.', { param });
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) {
    throw new GatewayError('invalid_parameter', `Tool call arguments nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`, { param });
  }
  return value as Record<string, unknown>;
}
