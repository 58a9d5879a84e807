// What every HTTP function shares (lib/http/routes.ts): the error bodies it documents, the POSTs'
// errors and event, the Swagger tag of a path, and the hapi route options a binding becomes,
// checked on a real hapi server that validates with them.
import Hapi from '@hapi/hapi';
import Joi from 'joi';
import { type HttpBinding, postEvent } from '../../../lib/functions/define';
import { errorDto, postErrors, routeOptions, tagOf } from '../../../lib/http/routes';
import { validationFailAction } from '../../../lib/http/input-keys';

describe('error bodies', () => {
  it('errorDto: statusCode, error and message required, with the examples given, under its label', () => {
    const dto = errorDto('GoneError', 410, 'Gone', 'it left');
    expect(dto.describe()).toMatchObject({
      flags: { label: 'GoneError', unknown: true },
      keys: { statusCode: { examples: [410] }, error: { examples: ['Gone'] }, message: { examples: ['it left'] } },
    });
    expect(dto.validate({ statusCode: 410, error: 'Gone', message: 'x', validation: {} }).error).toBeUndefined();
    expect(dto.validate({ statusCode: 410, error: 'Gone' }).error?.message).toBe('"message" is required');
  });

  it("postErrors: 400 with the route's own example, 401, 413, 415 and 503", () => {
    const errors = postErrors('AssignmentBadRequest', '"TrackID" is required');
    expect(Object.keys(errors).map(Number)).toEqual([400, 401, 413, 415, 503]);
    expect(errors[400].schema.describe()).toMatchObject({
      flags: { label: 'AssignmentBadRequest' },
      keys: { message: { examples: ['"TrackID" is required'] } },
    });
    expect(errors[503].description).toMatch(/nothing was written, send it again after Retry-After/);
  });

  it("postEvent: the validated body and the client's address", () => {
    const view = {
      method: 'post',
      params: {},
      query: {},
      headers: {},
      payload: { TrackID: '1' },
      clientAddress: '10.1.2.3',
      gone: () => () => {},
    };
    expect(postEvent(view)).toEqual({ body: { TrackID: '1' }, clientAddress: '10.1.2.3' });
  });
});

describe('routeOptions', () => {
  const binding: Omit<HttpBinding<unknown>, 'event'> = {
    query: Joi.object({ timeOut: Joi.number() }),
    payload: Joi.object({ TrackID: Joi.string().required() }),
    notes: ['a note'],
    responses: (input) => ({ 200: { description: `for ${String(input.queue)}` } }),
  };

  it('tags a path for Swagger, "api" only for documented routes', () => {
    expect(tagOf('/sortation')).toBe('sortation');
    expect(tagOf('/')).toBe('service');
    expect(routeOptions(binding, {}, 'd', '/sortation', {}).tags).toEqual(['api', 'sortation']);
    expect(routeOptions({ ...binding, undocumented: true }, {}, 'd', '/metrics', {}).tags).toEqual(['metrics']);
  });

  it("carries the description, the notes, the responses for the function's input, and what the caller adds", () => {
    const o = routeOptions(binding, { queue: 'sortation' }, 'Take a message', '/sortation', { id: 'receive', app: { query: ['timeOut'] } });
    expect(o).toMatchObject({
      id: 'receive',
      app: { query: ['timeOut'] },
      description: 'Take a message',
      notes: ['a note'],
      plugins: { 'hapi-swagger': { responses: { 200: { description: 'for sortation' } } } },
    });
  });

  it("validates with the binding's schemas on a real server", async () => {
    const server = Hapi.server({ routes: { validate: { failAction: validationFailAction } } });
    server.route({
      method: 'POST',
      path: '/sortation',
      options: {
        ...routeOptions(binding, {}, 'd', '/sortation', {}),
        handler: (request) => ({ got: request.payload, timeOut: (request.query as { timeOut?: number }).timeOut }),
      },
    });
    const good = await server.inject({ method: 'POST', url: '/sortation?timeOut=3', payload: { TrackID: '7' } });
    expect([good.statusCode, JSON.parse(good.payload)]).toEqual([200, { got: { TrackID: '7' }, timeOut: 3 }]);
    const badQuery = await server.inject({ method: 'POST', url: '/sortation?timeOut=x', payload: { TrackID: '7' } });
    expect([badQuery.statusCode, JSON.parse(badQuery.payload).message]).toEqual([400, '"timeOut" must be a number']);
    const badBody = await server.inject({ method: 'POST', url: '/sortation', payload: {} });
    expect([badBody.statusCode, JSON.parse(badBody.payload).message]).toEqual([400, '"TrackID" is required']);
  });
});
