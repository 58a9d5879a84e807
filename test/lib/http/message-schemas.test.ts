// The messages' joi schemas on their own: what a request may carry before it reaches a handler.
// (The same rules through hapi, with the service's error bodies: test/http/contract.test.ts.)
import type Joi from 'joi';
import { FieldWidth } from '../../../lib/telegram/fields';
import { ackHeaders, assignmentBody, destinationBody, timeOutQuery } from '../../../lib/http/message-schemas';

/** The first error message of `value` against `schema`, or undefined when it validates. */
const errorOf = (schema: Joi.Schema, value: unknown) => schema.validate(value).error?.details[0]?.message;

describe('message schemas', () => {
  it('text that travels to the sorter fits its telegram field: printable ASCII, no trailing space, at most its width', () => {
    const assignment = (TrackID: string) => ({ TrackID, Destination: 'D1' });
    expect(errorOf(assignmentBody, assignment('x'.repeat(FieldWidth.TrackID)))).toBeUndefined();
    expect(errorOf(assignmentBody, assignment('x'.repeat(FieldWidth.TrackID + 1)))).toBe(
      `"TrackID" must be at most ${FieldWidth.TrackID} characters (the width of its sorter telegram field)`,
    );
    expect(errorOf(assignmentBody, assignment('Größe'))).toBe(
      '"TrackID" must be printable ASCII (it travels in a fixed-width sorter telegram)',
    );
    expect(errorOf(assignmentBody, assignment('0004711 '))).toBe(
      '"TrackID" must be no trailing space (it travels in a fixed-width sorter telegram)',
    );
    expect(errorOf(destinationBody, { Destination: 'D1', DestinationText: 'x'.repeat(FieldWidth.DestinationText + 1) })).toMatch(
      /^"DestinationText" must be at most 40/,
    );
  });

  it('null in an optional field means omitted; enums that do not parse are not an error here', () => {
    expect(errorOf(assignmentBody, { TrackID: 'T1', Destination: 'D1', Barcode: null, Type: null })).toBeUndefined();
    expect(
      errorOf(destinationBody, { Destination: 'D1', DestinationText: null, LightColor: 'purple', BatchDoorStatus: 7 }),
    ).toBeUndefined();
    expect(errorOf(destinationBody, { DestinationStatus: 'Ready' })).toBe('"Destination" is required');
  });

  it('timeOut: any number; given twice, says so instead of "must be a number"', () => {
    expect(errorOf(timeOutQuery, { timeOut: 1e25 })).toBeUndefined();
    expect(errorOf(timeOutQuery, { timeOut: ['1', '2'] })).toBe('"timeOut" is given more than once: give it once');
    expect(errorOf(timeOutQuery, { timeOut: 'soon' })).toBe('"timeOut" must be a number');
  });

  it('X-Ack takes up to 100 comma-separated message ids; X-Ack-Mode only "explicit", in any case', () => {
    expect(errorOf(ackHeaders, { 'x-ack': ' 17 , 18,19 ', 'x-ack-mode': 'EXPLICIT' })).toBeUndefined();
    expect(errorOf(ackHeaders, { 'x-ack': Array.from({ length: 100 }, (_, i) => i + 1).join(',') })).toBeUndefined();
    expect(errorOf(ackHeaders, { 'x-ack': Array.from({ length: 101 }, (_, i) => i + 1).join(',') })).toBe(
      '"x-ack" must be message ids (X-Message-Id), comma-separated',
    );
    expect(errorOf(ackHeaders, { 'x-ack': '17;18' })).toBe('"x-ack" must be message ids (X-Message-Id), comma-separated');
    expect(errorOf(ackHeaders, { 'x-ack-mode': 'auto' })).toBe('"x-ack-mode" must be [explicit]');
  });
});
