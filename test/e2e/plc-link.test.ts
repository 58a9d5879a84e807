// The emulator's PLC link over real TCP, against a host written in the test with its own framing:
// resynchronisation, acknowledgement, repeats, refusals and resends as the protocol document says.
import net from 'node:net';
import { PlcLink } from '../../emulator/plc-link';
import { type Telegram, encodeContent, encodeData, nakData, parseContent, parseNak } from '../../bench/v1-codec';
import { until } from '../helpers/until';

/** A host on a raw socket: frames by hand, records what the PLC sends. */
async function rawHost(port: number) {
  const socket = net.connect({ port, host: '127.0.0.1' });
  await new Promise((r) => socket.once('connect', r));
  const received: Telegram[] = [];
  let buffer = '';
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    for (let end = buffer.indexOf('\x03'); end >= 0; end = buffer.indexOf('\x03')) {
      received.push(parseContent(buffer.slice(buffer.indexOf('\x02') + 1, end)));
      buffer = buffer.slice(end + 1);
    }
  });
  const send = (seq: number, type: Telegram['type'], flag: Telegram['flag'], data = '') =>
    socket.write(`\x02${encodeContent({ sender: 'WCS01', receiver: 'PLC01', seq, type, flag, data })}\x03`, 'latin1');
  return { socket, received, send };
}

describe('PlcLink over TCP', () => {
  const asgn = encodeData('ASGN', { TrackID: '0004711', Barcode: '', Destination: 'D001' });

  it('resynchronises, sends what was produced before the host came, and forgets it only on its ACK', async () => {
    const link = new PlcLink({ port: 0, ackTimeoutMs: 150, onData: () => {} });
    const port = await link.listen();
    link.sendData('VERI', encodeData('VERI', { MessageCode: 212, TrackID: '1', Barcode: '', Destination: 'D1' }));
    const host = await rawHost(port);
    await until(() => host.received.some((t) => t.type === 'SYNE'));
    expect(host.received.map((t) => `${t.type}${t.flag}${t.seq}`)).toEqual(['SYNSD0', 'VERID1', 'SYNED0']);
    await until(() => host.received.filter((t) => t.type === 'VERI').length >= 2); // resent with the same number
    expect(host.received.filter((t) => t.type === 'VERI').every((t) => t.seq === 1)).toBe(true);
    host.send(1, 'VERI', 'A');
    await until(() => link.unacknowledged === 0);
    host.socket.destroy();
    await link.close();
  });

  it('hands a data telegram on once, acknowledges its repeat, and NAKs what the sorter refuses with its code', async () => {
    const got: string[] = [];
    const link = new PlcLink({
      port: 0,
      onData: (t) => (t.type === 'DSET' ? { code: 2, text: 'unknown destination D999' } : void got.push(`${t.type}${t.seq}`)),
    });
    const port = await link.listen();
    const host = await rawHost(port);
    const answered = (n: number) => until(() => host.received.filter((t) => t.flag !== 'D').length >= n);
    host.send(0, 'SYNS', 'D', encodeData('SYNS', { Epoch: 'HOST00000001', NextSeq: 1 }));
    host.send(1, 'ASGN', 'D', asgn);
    await answered(2);
    host.send(1, 'ASGN', 'D', asgn); // its ACK was lost, say: sent again
    await answered(3);
    host.send(
      2,
      'DSET',
      'D',
      encodeData('DSET', {
        Destination: 'D999',
        DestinationStatus: 'Ready',
        LightStatus: 'Off',
        LightColor: 'Off',
        BatchDoorStatus: null,
        DestinationText: '',
      }),
    );
    await answered(4);
    host.send(3, 'REQU', 'D', 'x');
    await answered(5);
    const answers = host.received
      .filter((t) => t.flag !== 'D')
      .map((t) => `${t.type}${t.flag}${t.seq}${t.flag === 'N' ? `:${parseNak(t.data).code}` : ''}`);
    expect(answers).toEqual(['SYNSA0', 'ASGNA1', 'ASGNA1', 'DSETN2:2', 'REQUN3:3']);
    expect(got).toEqual(['ASGN1']);
    expect(link.counters.duplicates_received).toBe(1);
    host.socket.destroy();
    await link.close();
  });

  it('drops a telegram the host refuses for good (NAK 02), keeps one refused with 04 for the resend', async () => {
    const link = new PlcLink({ port: 0, ackTimeoutMs: 100, onData: () => {} });
    const port = await link.listen();
    const host = await rawHost(port);
    link.sendData('VERI', encodeData('VERI', { MessageCode: 212, TrackID: '1', Barcode: '', Destination: 'D1' }));
    link.sendData('VERI', encodeData('VERI', { MessageCode: 212, TrackID: '2', Barcode: '', Destination: 'D1' }));
    await until(() => host.received.filter((t) => t.type === 'VERI').length >= 2);
    host.send(1, 'VERI', 'N', nakData(2, 'bad'));
    host.send(2, 'VERI', 'N', nakData(4, 'cannot store now'));
    await until(() => link.unacknowledged === 1);
    await until(() => host.received.filter((t) => t.type === 'VERI' && t.seq === 2).length >= 2);
    host.socket.destroy();
    await link.close();
  });
});
