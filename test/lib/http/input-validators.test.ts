// The validators of the queue GETs and the POSTs (lib/http/input-validators.ts) against joi itself,
// the oracle: for any query, headers or body, the same value or the same error, however often the
// same input comes.
import fc from 'fast-check';
import Joi from 'joi';
import { absentKeysValidator, memoizedValidator, plainKeysValidator } from '../../../lib/http/input-validators';
import { ackHeaders, assignmentBody, destinationBody, timeOutQuery } from '../../../lib/http/message-schemas';

/** joi's answer: the value, or the error's message. */
const answer = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (err: Error) => ({ error: err.message }),
  );

const text = fc.oneof(
  fc.constantFrom('0', '10', '30', '-1', '1e25', '1.5', 'NaN', '', ' ', 'abc', 'explicit', 'EXPLICIT', 'no', '17', '17, 18', '1,x'),
  fc.string({ maxLength: 6 }),
);
const entries = (names: string[]) =>
  fc.dictionary(fc.constantFrom(...names), fc.oneof(text, fc.array(text, { minLength: 2, maxLength: 2 })), { maxKeys: 4 });

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

describe('plainKeysValidator', () => {
  const printable = fc.string({ unit: fc.constantFrom('A', '0', ' ', '-', '~', '\u00e9', '\t', '\u{1F600}'), maxLength: 50 });
  // Mostly values that pass, so that bodies valid but for one field come often.
  const field = fc.oneof(
    { arbitrary: fc.constantFrom('D017', '0004711', 'Ready', 'a b'), weight: 6 },
    printable,
    fc.constantFrom(
      '',
      ' ',
      'D017',
      '0004711 ',
      'x'.repeat(12),
      'x'.repeat(13),
      'x'.repeat(20),
      'x'.repeat(21),
      'x'.repeat(48),
      'x'.repeat(49),
    ),
    fc.constant(null),
    fc.integer(),
    fc.boolean(),
    fc.constant([]),
    fc.constant({}),
    fc.constant(undefined),
  );
  const bodies = (names: string[]) =>
    fc.oneof(fc.dictionary(fc.constantFrom(...names), field, { maxKeys: names.length }), fc.constantFrom(null, [], 'text', 7));

  for (const [name, schema, names] of [
    ['POST /sortation', assignmentBody, ['TrackID', 'Destination', 'Barcode', 'Type', 'Other']],
    [
      'POST /destination',
      destinationBody,
      ['Destination', 'DestinationStatus', 'DestinationText', 'LightStatus', 'LightColor', 'BatchDoorStatus', 'Type', 'Other'],
    ],
  ] as const) {
    it(`answers as joi does for any body of ${name}`, async () => {
      const validate = plainKeysValidator(schema);
      await fc.assert(
        fc.asyncProperty(bodies([...names]), async (body) => {
          const options = { context: { headers: {} } };
          expect(await answer(validate(body as object, options))).toEqual(await answer(schema.validateAsync(body, options)));
        }),
        { numRuns: 500 },
      );
    });
  }

  it('does not ask joi for a body that plainly meets the rules, and gives a copy', async () => {
    const validateAsync = jest.spyOn(assignmentBody, 'validateAsync');
    try {
      const validate = plainKeysValidator(assignmentBody);
      const body = { TrackID: '0004711', Destination: 'D017', Barcode: null, Other: [1] };
      const valid = await validate(body, { context: {} });
      expect(valid).toEqual(body);
      expect(valid).not.toBe(body);
      expect(validateAsync).not.toHaveBeenCalled();
      // One that does not (a trailing space) goes to joi, and so does any body when the route has joi options of its own.
      await expect(validate({ TrackID: '0004711 ', Destination: 'D017' }, { context: {} })).rejects.toThrow(/no trailing space/);
      await expect(validate(body, { context: {}, presence: 'required' } as object)).rejects.toThrow(/"Type" is required/);
      expect(validateAsync).toHaveBeenCalledTimes(2);
    } finally {
      validateAsync.mockRestore();
    }
  });

  it('leaves a schema with rules it does not know to joi for every request', async () => {
    const trimmed = Joi.object({ Name: Joi.string().trim() }).unknown(true);
    const closed = Joi.object({ Name: Joi.string() });
    const numeric = Joi.object({ N: Joi.number() }).unknown(true);
    expect(await plainKeysValidator(trimmed)({ Name: ' a ' }, {})).toEqual({ Name: 'a' });
    expect(await answer(plainKeysValidator(closed)({ Name: 'a', x: 1 }, {}))).toEqual({ error: '"x" is not allowed' });
    expect(await plainKeysValidator(numeric)({ N: '5' }, {})).toEqual({ N: 5 });
  });
});
