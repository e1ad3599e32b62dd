/**
 * Closing an ioredis client without waiting on a Redis that is gone: QUIT lets a connected server
 * finish what it was sent, but a client that is not connected would queue it (or refuse it) and
 * keep reconnecting, so that a gateway shutting down during an outage never exited. Past
 * `graceMs` a QUIT still unanswered is given up too.
 */
import type { Redis } from 'ioredis';

export async function closeRedis(client: Redis, graceMs = 1_000): Promise<void> {
  if (client.status !== 'ready') {
    client.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, graceMs);
    timer.unref();
  });
  try {
    await Promise.race([client.quit().then(() => undefined), late]);
  } catch {
    // A failed QUIT leaves nothing to wait for.
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}
