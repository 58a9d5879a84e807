// Pins what lib/internals/hapi.ts relies on, against the hapi in package-lock.json: a query or
// payload replaced before validation is what the route's validators and handler see, and the
// listener's clientError handler replaced answers what Node's parser refuses. An upgrade of hapi
// that changes either fails here.
import Hapi from '@hapi/hapi';
import Joi from 'joi';
import net from 'node:net';
import { replaceClientErrorHandler, replaceInput } from '../../../lib/internals/hapi';

describe("hapi's internals", () => {
  let server: Hapi.Server;
  afterEach(async () => server.stop());

  it('replaceInput: validators and the handler see the replaced query and payload', async () => {
    server = Hapi.server({ port: 0, host: '127.0.0.1' });
    server.ext('onPostAuth', (request, h) => {
      replaceInput(request, 'query', { timeOut: String(request.query.TIMEOUT) });
      replaceInput(request, 'payload', { Name: 'replaced' });
      return h.continue;
    });
    server.route({
      method: 'POST',
      path: '/x',
      options: {
        validate: { query: Joi.object({ timeOut: Joi.number().required() }), payload: Joi.object({ Name: Joi.string().required() }) },
        handler: (request) => ({ query: request.query, payload: request.payload }),
      },
    });
    const res = await server.inject({ method: 'POST', url: '/x?TIMEOUT=5', payload: { name: 'x' } });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.payload)).toEqual({ query: { timeOut: 5 }, payload: { Name: 'replaced' } });
  });

  it("replaceClientErrorHandler: our answer, not hapi's empty 400", async () => {
    server = Hapi.server({ port: 0, host: '127.0.0.1' });
    expect(server.listener.listenerCount('clientError')).toBeGreaterThan(0);
    replaceClientErrorHandler(server.listener, (_err, socket) =>
      socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 4\r\nConnection: close\r\n\r\nours'),
    );
    expect(server.listener.listenerCount('clientError')).toBe(1);
    await server.start();
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      const c = net.connect(server.info.port as number, '127.0.0.1', () => c.write('NOT HTTP AT ALL\r\n\r\n'));
      c.on('data', (d) => (text += d.toString()));
      c.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(answer.endsWith('ours')).toBe(true);
  });
});
