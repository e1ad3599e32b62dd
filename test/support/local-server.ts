/**
 * Listens on an ephemeral loopback port and closes hard: test servers leave responses open on
 * purpose (hangs, slow streams), so closing must destroy their sockets rather than wait for them.
 */
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface LocalServer {
  port: number;
  /** http://127.0.0.1:PORT */
  origin: string;
  /** Connections accepted so far (to check keep-alive reuse). */
  connections(): number;
  close(): Promise<void>;
}

export async function listenLocal(server: Server): Promise<LocalServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  server.on('connection', (socket: Socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
