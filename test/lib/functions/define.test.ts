// Function definitions (lib/functions/define.ts): an HTTP function's event built from the request
// by its binding, and the loaders that take a module's `fn` and refuse one of another kind or none.
import {
  empty,
  httpFunction,
  loadHttpFunction,
  loadScheduledFunction,
  loadTelegramFunction,
  ok,
  pathParam,
  scheduledFunction,
  telegramFunction,
} from '../../../lib/functions/define';
import type { Deps } from '../../../lib/deps';

const view = {
  method: 'get',
  params: { Id: '7' },
  query: { n: 2 },
  headers: {},
  payload: null,
  clientAddress: '10.0.0.1',
  gone: () => () => {},
};

describe('httpFunction', () => {
  it('invokes its handler with the deps and the event its binding makes of the request and the input', async () => {
    const seen: unknown[] = [];
    const f = httpFunction((deps, event: { id: string; queue: unknown }) => (seen.push([deps, event]), ok(event)), {
      notes: [],
      responses: () => ({}),
      event: (request, input) => ({ id: pathParam(request, 'Id'), queue: input.queue }),
    });
    const deps = { version: 'x' } as unknown as Deps;
    expect(f.kind).toBe('http');
    if (f.kind !== 'http') return;
    expect(await f.invoke(deps, view, { queue: 'sortation' })).toEqual({ kind: 'ok', body: { id: '7', queue: 'sortation' }, status: 200 });
    expect(seen).toEqual([[deps, { id: '7', queue: 'sortation' }]]);
  });

  it('scheduled and telegram functions invoke their handler with the deps and the input or event as they are', async () => {
    const seen: unknown[] = [];
    const deps = { version: 'x' } as unknown as Deps;
    const s = scheduledFunction((d, input) => (seen.push([d, input]), empty));
    const t = telegramFunction((d, event) => (seen.push([d, event.seq]), empty));
    expect([s.kind, t.kind]).toEqual(['schedule', 'telegram']);
    if (s.kind !== 'schedule' || t.kind !== 'telegram') return;
    expect(await s.invoke(deps, { keepDays: 7 })).toBe(empty);
    await t.invoke(deps, {
      seq: 5,
      after: 4,
      arrivedAt: 0,
      message: { Type: 'VERIFY', TrackID: '1', Barcode: '', Destination: 'D1', MessageCode: 212 },
    });
    expect(seen).toEqual([
      [deps, { keepDays: 7 }],
      [deps, 5],
    ]);
  });
});

describe('the loaders', () => {
  it("take the module's fn when it is of the trigger's kind", () => {
    expect(loadHttpFunction('test/fixtures/functions/echo-http').binding.notes).toEqual(['Echoes its event']);
    expect(loadScheduledFunction('test/fixtures/functions/failing-schedule').kind).toBe('schedule');
    expect(loadTelegramFunction('test/fixtures/functions/record-telegram').kind).toBe('telegram');
  });

  it('refuse a function of another kind, or a module without one, naming the module', () => {
    expect(() => loadScheduledFunction('test/fixtures/functions/echo-http')).toThrow(
      'manifest.json: test/fixtures/functions/echo-http is a http function, it cannot have a schedule trigger',
    );
    expect(() => loadTelegramFunction('test/fixtures/functions/failing-schedule')).toThrow(
      'manifest.json: test/fixtures/functions/failing-schedule is a schedule function, it cannot have a telegram trigger',
    );
    expect(() => loadHttpFunction('test/fixtures/functions/record-telegram')).toThrow(
      'is a telegram function, it cannot have a http trigger',
    );
    expect(() => loadHttpFunction('lib/functions/define')).toThrow(
      'manifest.json: lib/functions/define does not export a function definition as fn',
    );
  });
});
