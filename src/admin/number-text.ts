/**
 * Numbers of an admin body as they were written. JSON.parse reads every number as the nearest
 * double, so `1.0000000000000001` arrives as exactly 1 and no check of the double can tell it was
 * not; amounts of money are checked on their text instead (money.ts). The admin API's JSON parser
 * is the gateway's own, which also keeps each body's text here; a member's text is found by
 * parsing that text again with every number turned into a string of its own digits.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { parseJsonBody } from '../http/json-body.js';

/** Admin bodies only (small, and gone with their request): the /v1 hot path keeps nothing. */
const bodyTexts = new WeakMap<FastifyRequest, string>();

/** In the admin plugin's own context: its routes parse JSON as every route does, and keep the text. */
export function keepJsonText(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parseJsonBody(request, body, (err, value) => {
      if (err === null) bodyTexts.set(request, typeof body === 'string' ? body : body.toString('utf8'));
      done(err, value);
    });
  });
}

/**
 * How the request's body wrote its top-level member `key`, which the parse read as a number; undefined
 * when the body was not kept.
 */
export function numberText(request: FastifyRequest, key: string): string | undefined {
  const text = bodyTexts.get(request);
  return text === undefined ? undefined : memberText(text, key);
}

/**
 * JSON's strings and numbers, in order. In valid JSON a quote outside a string can only open one
 * (matched whole, escapes included), and a digit or a minus outside a string can only begin a
 * number, so no match begins inside a string.
 */
const STRING_OR_NUMBER = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g;

/** The text of member `key` of the JSON object `json` (valid JSON), when that member is a number or a string. */
export function memberText(json: string, key: string): string | undefined {
  const texts: unknown = JSON.parse(json.replace(STRING_OR_NUMBER, (token) => (token.startsWith('"') ? token : `"${token}"`)));
  if (texts === null || typeof texts !== 'object' || Array.isArray(texts) || !Object.hasOwn(texts, key)) return undefined;
  const member: unknown = (texts as Record<string, unknown>)[key];
  return typeof member === 'string' ? member : undefined;
}
