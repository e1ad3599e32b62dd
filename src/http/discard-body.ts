/**
 * The rest of a body refused before it was read (over the size limit, a wrong key, a file type not
 * allowed): read and thrown away, so that the client gets its answer. Closing the connection at
 * once, with the client's bytes still arriving unread, makes the kernel answer them with a reset,
 * and a client that sends its whole body before it reads (fetch and undici, so the openai SDK, the
 * Vercel ai SDK and LangChain) then loses the 413 for a connection error, which the SDKs retry with
 * the same body. Not for ever: past `MAX_DISCARD_BYTES` or `MAX_DISCARD_MS` the connection is
 * closed regardless. Once the body is read to its end the connection can carry the next request.
 */
import type { IncomingMessage } from 'node:http';

export const MAX_DISCARD_BYTES = 64 * 1024 * 1024;
export const MAX_DISCARD_MS = 10_000;

/** Requests whose body is being thrown away: answered already, nothing to fail but the connection. */
const discarding = new WeakSet<IncomingMessage>();

export function isDiscarding(req: IncomingMessage): boolean {
  return discarding.has(req);
}

export function discardRestOfBody(req: IncomingMessage): void {
  if (req.complete || req.destroyed || discarding.has(req)) return;
  discarding.add(req);
  let discarded = 0;
  const giveUp = (): void => {
    stop();
    req.socket?.destroy();
  };
  const onData = (chunk: Buffer): void => {
    discarded += chunk.length;
    if (discarded > MAX_DISCARD_BYTES) giveUp();
  };
  const timer = setTimeout(giveUp, MAX_DISCARD_MS);
  timer.unref();
  const stop = (): void => {
    clearTimeout(timer);
    req.removeListener('data', onData);
    req.removeListener('end', stop);
    req.removeListener('close', stop);
  };
  req.on('data', onData);
  req.once('end', stop);
  req.once('close', stop);
  req.resume();
}
