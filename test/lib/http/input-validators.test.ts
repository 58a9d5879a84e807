// The queue GETs' validators (lib/http/input-validators.ts) against joi itself, the oracle: for
// any query or headers, the same value or the same error, however often the same input comes.
import fc from 'fast-check';
import Joi from 'joi';
import { absentKeysValidator, memoizedValidator } from '../../../lib/http/input-validators';
import { ackHeaders, timeOutQuery } from '../../../lib/http/message-schemas';

/** joi's answer: the value, or the error's message. */
const answer = (p: Promise<unknown>) => p.then((value) => ({ value }), (err: Error) => ({ error: err.message }));

const text = fc.oneof(fc.constantFrom('0', '10', '30', '-1', '1e25', '1.5', 'NaN', '', ' ', 'abc', 'explicit', 'EXPLICIT', 'no', '17', '17, 18', '1,x'), fc.string({ maxLength: 6 }));
const entries = (names: string[]) => fc.dictionary(fc.constantFrom(...names), fc.oneof(text, fc.array(text, { minLength: 2, maxLength: 2 })), { maxKeys: 4 });

describe('memoizedValidator', () => {
  it('answers as joi does for any query, the first time and every time after', async () => {
    const validate = memoizedValidator(timeOutQuery);
    const queries = fc.array(entries(['timeOut', 'other', 'x']), { minLength: 1, maxLength: 40 });
    await fc.assert(
      fc.asyncProperty(queries, async (list) => {
        // Each query twice, the second from the memo when the first was valid.
        for (const q of [...list, ...list]) expect(await answer(validate(q, {}))).toEqual(await answer(timeOutQuery.validateAsync(q, {})));
      }),
      { numRuns: 200 },
    );
  });

  it('gives a copy: a handler that changes its query does not change the next one', async () => {
    const validate = memoizedValidator(timeOutQuery);
    const first = (await validate({ timeOut: '10' }, {})) as { timeOut: number };
    first.timeOut = 99;
    expect(await validate({ timeOut: '10' }, {})).toEqual({ timeOut: 10 });
  });

  it('keeps a bounded number of queries', async () => {
    const validate = memoizedValidator(timeOutQuery);
    for (let i = 0; i < 1000; i++) expect(await validate({ timeOut: String(i) }, {})).toEqual({ timeOut: i });
  });
});

describe('absentKeysValidator', () => {
  it('answers as joi does for any headers', async () => {
    const validate = absentKeysValidator(ackHeaders);
    await fc.assert(
      fc.asyncProperty(entries(['x-ack', 'x-ack-mode', 'host', 'accept', 'x-other']), async (h) => {
        expect(await answer(validate(h, {}))).toEqual(await answer(ackHeaders.validateAsync(h, {})));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves a schema with a required key, or without unknown keys, to joi for every request', async () => {
    const required = Joi.object({ 'x-key': Joi.string().required() }).unknown(true);
    const closed = Joi.object({ 'x-key': Joi.string() });
    expect(await answer(absentKeysValidator(required)({ host: 'h' }, {}))).toEqual({ error: '"x-key" is required' });
    expect(await answer(absentKeysValidator(closed)({ host: 'h' }, {}))).toEqual({ error: '"host" is not allowed' });
  });
});
