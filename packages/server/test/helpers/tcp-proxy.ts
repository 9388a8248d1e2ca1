// Outage tests cut a dependency off without stopping the shared server: clients connect
// through this proxy, and down() closes every connection and the port until up().
import net from 'node:net';

/** A TCP proxy in front of a server (PostgreSQL, Redis) that can be cut and restored, on the same port. */
export async function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | undefined;
  let port = 0;
  const up = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server?.address() as net.AddressInfo).port;
        resolve();
      });
    });
  const down = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server?.close(() => resolve());
    });
  await up();
  return { port: () => port, up, down };
}
