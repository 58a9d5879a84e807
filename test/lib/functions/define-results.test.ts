// What handlers return (lib/functions/define.ts): values for every expected outcome.
import { empty, ok, text, unavailable } from '../../../lib/functions/define';

it('makes each result with its defaults: 200, a 1 s Retry-After', () => {
  expect(ok({ a: 1 })).toEqual({ kind: 'ok', body: { a: 1 }, status: 200 });
  expect(ok({ status: 'fail' }, 503)).toEqual({ kind: 'ok', body: { status: 'fail' }, status: 503 });
  expect(empty).toEqual({ kind: 'empty' });
  expect(unavailable('stalled')).toEqual({ kind: 'unavailable', reason: 'stalled', retryAfterSeconds: 1 });
  expect(unavailable('stalled', 0)).toEqual({ kind: 'unavailable', reason: 'stalled', retryAfterSeconds: 0 });
  expect(text('x 1\n', 'text/plain')).toEqual({ kind: 'text', body: 'x 1\n', contentType: 'text/plain' });
});
