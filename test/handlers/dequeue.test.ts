// GET /sortation and /destination as a handler: the clamped wait, the watch on the client, probes.
import { dequeue, waitSeconds } from '../../handlers/dequeue';

describe('waitSeconds', () => {
  it.each([
    [undefined, 0, 0],
    [undefined, 7, 7],
    [5, 0, 5],
    [2.9, 0, 2],
    [-3, 10, 0],
    [31, 0, 30],
    [1e9, 0, 30],
    [0, 10, 0],
  ])('timeOut %p with default %p waits %p s', (timeOut, def, expected) => {
    expect(waitSeconds(timeOut, def)).toBe(expected);
  });
});

describe('dequeue', () => {
  it('asks the queue dispatcher for the clamped wait and passes the watch on the client', async () => {
    const calls: Array<[number, unknown]> = [];
    const dispatcher = { take: async (ms: number, gone?: unknown) => (calls.push([ms, gone]), null) };
    const signal = () => () => {};
    const deps = {
      dispatchers: { sortation: dispatcher, destination: dispatcher } as never,
      settings: { DefaultTimeOut: 3 },
      deliveries: { acknowledge: () => 0 },
    };
    expect(await dequeue(deps, { queue: 'sortation', timeOut: 99, gone: signal })).toEqual({ kind: 'empty' });
    expect(await dequeue(deps, { queue: 'destination' })).toEqual({ kind: 'empty' });
    expect(calls).toEqual([
      [30000, signal],
      [3000, undefined],
    ]);
  });

  it('passes X-Ack to the delivery tracker first, and the explicit mode on with the message', async () => {
    const acks: Array<[string, readonly number[]]> = [];
    const claim = { stored: { id: 9 } };
    const dispatcher = { take: async () => claim };
    const deps = {
      dispatchers: { sortation: dispatcher, destination: dispatcher } as never,
      settings: { DefaultTimeOut: 0 },
      deliveries: { acknowledge: (q: string, ids: readonly number[]) => (acks.push([q, ids]), ids.length) },
    };
    expect(await dequeue(deps, { queue: 'destination', ack: [7, 8], explicitAck: true })).toEqual({
      kind: 'message',
      claim,
      explicitAck: true,
    });
    expect(await dequeue(deps, { queue: 'sortation' })).toEqual({ kind: 'message', claim, explicitAck: false });
    expect(acks).toEqual([['destination', [7, 8]]]);
  });

  it('a HEAD acknowledges what it carries and takes nothing', async () => {
    const acks: number[] = [];
    const dispatcher = {
      take: async () => {
        throw new Error('a probe must not take a message');
      },
    };
    const deps = {
      dispatchers: { sortation: dispatcher, destination: dispatcher } as never,
      settings: { DefaultTimeOut: 0 },
      deliveries: { acknowledge: (_q: string, ids: readonly number[]) => (acks.push(...ids), ids.length) },
    };
    expect(await dequeue(deps, { queue: 'sortation', probe: true, ack: [3] })).toEqual({ kind: 'empty' });
    expect(acks).toEqual([3]);
  });
});
