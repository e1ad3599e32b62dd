/**
 * Server-sent events from an upstream body, as an async iterator of batches: the complete events
 * of each read. Built on eventsource-parser, which handles field folding, CRLF and events split
 * across reads.
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { upstreamFault } from './upstream-faults.js';
import type { CancelSignal } from '../../util/cancellation.js';

export interface SseEvent {
  /** The `event:` field, or undefined for the default "message" event. */
  event: string | undefined;
  data: string;
}

export async function* sseEvents(body: AsyncIterable<Uint8Array>, signal: CancelSignal): AsyncGenerator<SseEvent[]> {
  // StringDecoder keeps UTF-8 sequences split across reads whole, about 3x cheaper than TextDecoder.
  const decoder = new StringDecoder('utf8');
  let pending: SseEvent[] = [];
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      pending.push({ event: message.event, data: message.data });
    },
  });
  try {
    for await (const chunk of body) {
      parser.feed(decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
      if (pending.length > 0) {
        const ready = pending;
        pending = [];
        yield ready;
      }
    }
  } catch (err) {
    throw upstreamFault(err, signal);
  }
  parser.feed(decoder.end());
  if (pending.length > 0) yield pending;
}
