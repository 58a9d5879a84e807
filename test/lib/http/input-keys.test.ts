// lib/http/input-keys.ts: keys bound case-insensitively to the schema's spelling, a field given
// twice refused with a 400 naming it, and validation errors passed on as they are.
import Hapi from '@hapi/hapi';
import Boom from '@hapi/boom';
import Joi from 'joi';
import { canonicalKeys, refuseRepeatedKeys, schemaKeys, validationFailAction } from '../../../lib/http/input-keys';

describe('input keys', () => {
  const keys = ['TrackID', 'Destination'];

  it('renames keys to the schema spelling, keeps unknown ones, leaves non-objects alone', () => {
    expect(canonicalKeys({ trackid: '1', DESTINATION: 'D1', extra: true }, keys, 'body')).toEqual({
      TrackID: '1',
      Destination: 'D1',
      extra: true,
    });
    expect(canonicalKeys([1, 2], keys, 'body')).toEqual([1, 2]);
    expect(canonicalKeys(null, keys, 'body')).toBeNull();
    expect(canonicalKeys('text', keys, 'body')).toBe('text');
  });

  it('input spelled as the schema spells it is passed on as it is, not copied; with any other key it is copied, that key kept', () => {
    const asSpelled = { TrackID: '1', Destination: 'D1' };
    expect(canonicalKeys(asSpelled, keys, 'body')).toBe(asSpelled);
    const withUnknown = { TrackID: '1', extra: true };
    expect(canonicalKeys(withUnknown, keys, 'body')).toEqual(withUnknown);
    // A null-prototype object (as a query string parses) is read by its own keys alone.
    const query = Object.assign(Object.create(null) as Record<string, unknown>, { trackid: '1' });
    expect(canonicalKeys(query, keys, 'query')).toEqual({ TrackID: '1' });
  });

  it('two spellings of one field are a 400 naming both', () => {
    let err: Boom.Boom | undefined;
    try {
      canonicalKeys({ TrackID: '1', trackId: '2' }, keys, 'query');
    } catch (e) {
      err = e as Boom.Boom;
    }
    expect(err?.output.statusCode).toBe(400);
    expect(err?.message).toBe('"TrackID" is given twice in the query (as "TrackID" and "trackId")');
  });

  it('one field twice under the same spelling at the top of the body is a 400; nested or unknown repeats are not its business', () => {
    expect(() => refuseRepeatedKeys('{"TrackID":"1","Destination":"D1","TrackID":"2"}', keys)).toThrow(
      '"TrackID" is given twice in the body (as "TrackID" and "TrackID")',
    );
    expect(() => refuseRepeatedKeys('{"trackid":"1","trackid":"2"}', keys)).toThrow(
      '"TrackID" is given twice in the body (as "trackid" and "trackid")',
    );
    expect(() => refuseRepeatedKeys('{"TrackID":"1","x":{"a":1,"a":2}}', keys)).not.toThrow();
    expect(() => refuseRepeatedKeys('{"other":1,"other":2}', keys)).not.toThrow();
  });

  it('reads the key names a joi schema declares', () => {
    expect(schemaKeys(Joi.object({ TrackID: Joi.string(), Destination: Joi.string() }))).toEqual(keys);
    expect(schemaKeys(Joi.object())).toEqual([]);
    expect(schemaKeys(undefined)).toEqual([]);
  });

  it('as failAction, makes a validation error a 400 that names the field (hapi would hide it)', async () => {
    const server = Hapi.server();
    const query = Joi.object({ timeOut: Joi.number() });
    server.route({ method: 'GET', path: '/q', options: { handler: () => 'ok', validate: { query, failAction: validationFailAction } } });
    const res = await server.inject('/q?timeOut=soon');
    expect([res.statusCode, JSON.parse(res.payload)]).toEqual([
      400,
      { statusCode: 400, error: 'Bad Request', message: '"timeOut" must be a number', validation: { source: 'query', keys: ['timeOut'] } },
    ]);
  });
});
