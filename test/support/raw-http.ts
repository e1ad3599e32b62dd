/**
 * HTTP/1.1 over one raw TCP connection, for what fetch cannot do: send a request on a connection
 * that is still busy with another (pipelining), e.g. to reach a server that drains and no longer
 * accepts connections, and see exactly which responses come back on it; or send part of a request
 * and then nothing, as a stalled client does.
 */
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';

export interface RawResponse {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

export class RawConnection {
  private buffer = Buffer.alloc(0);
  private ended = false;
  private wake: (() => void) | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake?.();
    });
    const end = (): void => {
      this.ended = true;
      this.wake?.();
    };
    socket.on('end', end);
    socket.on('close', end);
    socket.on('error', end);
  }

  static async open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  /** Writes one request; does not wait for its response. */
  send(method: string, path: string, headers: Record<string, string> = {}, body = ''): void {
    const all: Record<string, string> = { host: 'localhost', ...headers };
    if (body !== '' || method === 'POST') all['content-length'] = String(Buffer.byteLength(body));
    const head = Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    this.socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n${body}`);
  }

  /** Writes bytes as they are: a request's head, or a part of its body that a client then stops sending. */
  write(bytes: string | Buffer): void {
    this.socket.write(bytes);
  }

  /** The next response on the connection (bodies with Content-Length or chunked). */
  async response(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.parse();
      if (parsed !== null) return parsed;
      if (this.ended) throw new Error(`the connection ended before a whole response: ${this.buffer.toString()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no whole response within ${timeoutMs} ms: ${this.buffer.toString()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = null;
          resolve();
        };
      });
    }
  }

  /** Resolves once the server has closed the connection. */
  async closed(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error(`the connection stayed open for ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private parse(): RawResponse | null {
    const headEnd = this.buffer.indexOf('\r\n\r\n');
    if (headEnd === -1) return null;
    const lines = this.buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const rest = this.buffer.subarray(headEnd + 4);
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (rest.length < length) return null;
      this.buffer = rest.subarray(length);
      return { status, headers, body: rest.subarray(0, length).toString('utf8') };
    }
    if (headers['transfer-encoding'] === 'chunked') {
      let offset = 0;
      const parts: Buffer[] = [];
      for (;;) {
        const sizeEnd = rest.indexOf('\r\n', offset);
        if (sizeEnd === -1) return null;
        const size = parseInt(rest.subarray(offset, sizeEnd).toString('latin1'), 16);
        if (rest.length < sizeEnd + 2 + size + 2) return null;
        if (size === 0) {
          this.buffer = rest.subarray(sizeEnd + 4);
          return { status, headers, body: Buffer.concat(parts).toString('utf8') };
        }
        parts.push(rest.subarray(sizeEnd + 2, sizeEnd + 2 + size));
        offset = sizeEnd + 2 + size + 2;
      }
    }
    // Neither: the body runs to the end of the connection.
    if (!this.ended) return null;
    this.buffer = Buffer.alloc(0);
    return { status, headers, body: rest.toString('utf8') };
  }
}
