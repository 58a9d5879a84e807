// Test helper: a PLC scripted by the test over real TCP on 127.0.0.1, framing by the codec's own
// decoder: it records every telegram the service sends and answers as the test says.
import net from 'node:net';
import { type Telegram, encodeContent, parseContent } from '../../bench/v1-codec';
import { TelegramDecoder } from '../../bench/v1-decoder';

/** A listening fake PLC: what it received, and how to talk to (or drop) the connected service. */
export interface ScriptedPlc {
  server: net.Server;
  received: Telegram[];
  /** Resolves with the port once listening. */
  listening: Promise<number>;
  /** Send a telegram's content (between STX and ETX) to the connected service. */
  toHost(content: string): void;
  /** Drop the service's connection, as a PLC restart or a cable would. */
  drop(): void;
  /** Connections accepted so far. */
  accepted(): number;
  /** True while the service's connection is open. */
  connected(): boolean;
  /** Stop listening and drop the connection. */
  close(): Promise<void>;
}

/** Listen on `port` (0: any free one); `answer` sees each telegram received, with a way to reply. */
export function scriptedPlc(answer: (t: Telegram, send: (content: string) => void) => void, port = 0): ScriptedPlc {
  const received: Telegram[] = [];
  let current: net.Socket | null = null;
  let accepted = 0;
  const server = net.createServer((socket) => {
    current = socket;
    accepted += 1;
    const decoder = new TelegramDecoder();
    const send = (content: string) => socket.write(`\x02${content}\x03`, 'latin1');
    socket.on('data', (chunk) => {
      for (const item of decoder.push(chunk)) {
        if (item.kind !== 'telegram') continue;
        const t = parseContent(item.content);
        received.push(t);
        answer(t, send);
      }
    });
    socket.on('error', () => {});
  });
  const listening = new Promise<number>((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
  return {
    server,
    received,
    listening,
    toHost: (content) => current!.write(`\x02${content}\x03`, 'latin1'),
    drop: () => current?.destroy(),
    accepted: () => accepted,
    connected: () => current !== null && !current.destroyed && !current.readableEnded,
    close: () =>
      new Promise<void>((resolve) => {
        current?.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The PLC's ACK of a telegram the service sent. */
export const ack = (t: Telegram): string =>
  encodeContent({ sender: 'PLC01', receiver: 'WCS01', seq: t.seq, type: t.type, flag: 'A', data: '' });
