import net from 'node:net';

const DEFAULT_PORTS: Record<string, number> = { 'redis:': 6379, 'postgres:': 5432, 'postgresql:': 5432 };

/** How the proxy treats connections: pass bytes both ways, refuse (and drop every open one), or hang (keep them open, pass nothing). */
export type FaultMode = 'forward' | 'refuse' | 'hang';

export interface FaultProxy {
  port: number;
  /** `url` with its port pointed at the proxy. */
  urlFor(url: string): string;
  mode(next: FaultMode): void;
  close(): Promise<void>;
}

/**
 * A TCP proxy in front of a dependency (PostgreSQL, Redis) that a test switches between
 * `forward`, `refuse` (every open connection dropped, new ones refused) and `hang` (connections
 * accepted and kept open, nothing passed either way: a balancer whose backend went away).
 * `url` names the dependency (`redis://…`, `postgres://…`). Back to `forward`, hung connections stay hung: only new ones pass, as after a real network
 * fault, so a client must notice and reconnect by itself.
 */
export async function startFaultProxy(url: string): Promise<FaultProxy> {
  const parsed = new URL(url);
  const target = { host: parsed.hostname, port: Number(parsed.port || DEFAULT_PORTS[parsed.protocol]) };
  let current: FaultMode = 'forward';
  const open = new Set<net.Socket>();
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    track(client);
    if (current === 'refuse') return void client.destroy();
    if (current === 'hang') return void client.pause();
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    const hang = () => {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    };
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    hangers.add(hang);
    client.once('close', () => hangers.delete(hang));
  });
  const hangers = new Set<() => void>();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    urlFor: (url) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    mode: (next) => {
      current = next;
      if (next === 'refuse') for (const socket of open) socket.destroy();
      if (next === 'hang') for (const hang of hangers) hang();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
