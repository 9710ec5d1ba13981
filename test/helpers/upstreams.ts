// Upstreams on loopback that agents forward to, and a client of them, for the agents' tests.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';

/** A TCP upstream on loopback that answers each connection with the SHA-256 of all it received, after the client's end. */
export async function digestUpstream(): Promise<{ port: number; close(): Promise<void>; connections: () => number }> {
  let connections = 0;
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    connections++;
    const hash = createHash('sha256');
    let bytes = 0;
    socket.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
    });
    socket.on('end', () => socket.end(`${bytes} ${hash.digest('hex')}\n`));
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Sends `payload` to host:port, half-closes, and reads the answer to its end. */
export async function roundTrip(port: number, payload: Buffer): Promise<string> {
  const socket = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.end(payload);
  await once(socket, 'end');
  socket.destroy();
  return Buffer.concat(chunks).toString();
}
