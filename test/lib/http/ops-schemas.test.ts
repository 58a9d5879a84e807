// The operator's joi schemas on their own: the inputs of the item and dead-letter routes.
// (The documented responses against real ones: test/lib/http/openapi.test.ts.)
import type Joi from 'joi';
import { deadLetterQuery, itemParams, requeueBody } from '../../../lib/http/ops-schemas';

/** The first error message of `value` against `schema`, or undefined when it validates. */
const errorOf = (schema: Joi.Schema, value: unknown) => schema.validate(value).error?.details[0]?.message;

describe('ops schemas', () => {
  it('requeue: Ids or All, not both and not neither, each said in words', () => {
    expect(errorOf(requeueBody, { Ids: [3, 4] })).toBeUndefined();
    expect(errorOf(requeueBody, { All: true })).toBeUndefined();
    expect(errorOf(requeueBody, {})).toBe('give "Ids" (the dead letters to send back) or "All": true');
    expect(errorOf(requeueBody, { Ids: [3], All: true })).toBe('give "Ids" or "All", not both');
    expect(errorOf(requeueBody, { Ids: [] })).toBe('"Ids" must contain at least 1 items');
    expect(errorOf(requeueBody, { Ids: [0] })).toBe('"Ids[0]" must be greater than or equal to 1');
    expect(errorOf(requeueBody, { All: false })).toBe('"All" must be [true]');
  });

  it('dead letters: 100 by default, at most 1000, of one queue or both', () => {
    expect(deadLetterQuery.validate({}).value).toEqual({ limit: 100 });
    expect(errorOf(deadLetterQuery, { limit: 1001 })).toBe('"limit" must be less than or equal to 1000');
    expect(errorOf(deadLetterQuery, { queue: 'outbox' })).toBe('"queue" must be one of [sortation, destination]');
  });

  it('an item is named by a TrackID of at most 20 characters', () => {
    expect(errorOf(itemParams, { TrackID: '0004711' })).toBeUndefined();
    expect(errorOf(itemParams, { TrackID: 'x'.repeat(21) })).toBe('"TrackID" length must be less than or equal to 20 characters long');
  });
});
