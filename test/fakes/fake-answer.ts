/**
 * What the fake OpenAI's audio and video routes answer, as data, so that each route module stays
 * a pure function of the request and the server writes every answer the same way: JSON, text,
 * or bytes in several chunks (chunked transfer encoding, as OpenAI streams audio).
 */
import type { ServerResponse } from 'node:http';

interface AnswerBase {
  readonly status: number;
  /** Further response headers (`retry-after`). */
  readonly headers?: Readonly<Record<string, string>>;
}

export type FakeAnswer =
  | (AnswerBase & { readonly json: unknown })
  | (AnswerBase & { readonly contentType: string; readonly text: string })
  | (AnswerBase & {
      readonly contentType: string;
      readonly chunks: readonly Buffer[];
      /** Destroys the connection after this many chunks, mid-body. */
      readonly cutAfter?: number;
    });

/** OpenAI's error body: `{"error":{"message","type","param","code"}}`. */
export function openAIError(status: number, message: string, param: string | null = null, code: string | null = null, type = 'invalid_request_error'): FakeAnswer {
  return { status, json: { error: { message, type, param, code } } };
}

export function writeAnswer(res: ServerResponse, answer: FakeAnswer): void {
  for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
  if ('json' in answer) {
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.json));
    return;
  }
  if ('text' in answer) {
    res.writeHead(answer.status, { 'content-type': answer.contentType });
    res.end(answer.text);
    return;
  }
  // No content-length: the chunks go out as they are "generated", each in its own write.
  res.writeHead(answer.status, { 'content-type': answer.contentType, 'transfer-encoding': 'chunked' });
  res.flushHeaders();
  const chunks = answer.chunks;
  let next = 0;
  const writeNext = (): void => {
    if (res.destroyed) return;
    if (answer.cutAfter !== undefined && next === answer.cutAfter) {
      res.socket?.destroy();
      return;
    }
    if (next === chunks.length) {
      res.end();
      return;
    }
    res.write(chunks[next++]);
    setTimeout(writeNext, 2);
  };
  writeNext();
}
