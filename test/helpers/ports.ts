// A port free on loopback now, for a listener whose address must be known before it starts (a
// child process, a server whose peers are configured with it). Another process could take it
// between this check and the listen; on a test machine that is rare enough.
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
