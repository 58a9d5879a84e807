// Test helper: a loopback port that is free right now.
import net from 'node:net';

/** A port free right now, so that a restarted service can listen where its clients expect it. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
