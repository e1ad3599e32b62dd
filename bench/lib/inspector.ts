/**
 * A connection to a Node process's inspector (the Chrome DevTools protocol over a WebSocket), for
 * the profilers of the bench: a server started with `--inspect` is asked to record while it runs.
 */
import { WebSocket } from 'undici';

/** One inspector connection: a request and its answer are matched by id. */
export class InspectorSession {
  private next = 1;
  private closed = false;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : this.waiting.get(message.id);
      if (waiter === undefined || message.id === undefined) return;
      this.waiting.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(message.error.message));
      else waiter.resolve(message.result);
    });
    socket.addEventListener('close', () => {
      this.closed = true;
      for (const waiter of this.waiting.values()) waiter.reject(new Error('the inspector connection closed'));
      this.waiting.clear();
    });
  }

  /** The session of the first target of the process whose inspector listens on `port`. */
  static async connect(port: number): Promise<InspectorSession> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{ webSocketDebuggerUrl: string }>;
    const address = targets[0]?.webSocketDebuggerUrl;
    if (address === undefined) throw new Error(`no inspector target on port ${port}`);
    return InspectorSession.open(address);
  }

  private static open(address: string): Promise<InspectorSession> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(address);
      const failed = (): void => reject(new Error(`could not reach the inspector at ${address}`));
      socket.addEventListener('open', () => resolve(new InspectorSession(socket)), { once: true });
      socket.addEventListener('error', failed, { once: true });
      socket.addEventListener('close', failed, { once: true });
    });
  }

  /** Fails at once on a closed connection: undici drops what is sent on one without a word. */
  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    if (this.closed) return Promise.reject(new Error(`the inspector connection closed before ${method}`));
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ id, method, params }));
    });
  }

  close(): void {
    this.socket.close();
  }
}
