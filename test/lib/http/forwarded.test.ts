// The client's address behind a reverse proxy: X-Forwarded-For believed from trusted proxies only.
import { validateConfig } from '../../../lib/process/config';
import { clientAddressResolver } from '../../../lib/http/forwarded';
import { trustedProxyProblem } from '../../../lib/process/config';
import { testService } from '../../helpers/service';

describe('clientAddressResolver', () => {
  it('without TrustedProxies: the peer, whatever the header says', () => {
    const resolve = clientAddressResolver([]);
    expect(resolve('10.0.0.5', '1.2.3.4')).toBe('10.0.0.5');
    expect(resolve('::ffff:10.0.0.5', undefined)).toBe('10.0.0.5');
    expect(resolve(undefined, undefined)).toBeNull();
  });

  it('from a trusted proxy: the nearest untrusted hop, read from the right', () => {
    const resolve = clientAddressResolver(['127.0.0.1', '10.1.0.0/16']);
    expect(resolve('127.0.0.1', '192.168.7.20')).toBe('192.168.7.20');
    expect(resolve('::ffff:127.0.0.1', '192.168.7.20')).toBe('192.168.7.20');
    // A client may send its own X-Forwarded-For: only what the trusted proxies appended counts.
    expect(resolve('127.0.0.1', '6.6.6.6, 192.168.7.20, 10.1.2.3')).toBe('192.168.7.20');
    expect(resolve('127.0.0.1', ['6.6.6.6', '192.168.7.20'])).toBe('192.168.7.20');
    expect(resolve('127.0.0.1', '10.1.2.3')).toBe('10.1.2.3'); // all trusted: the farthest
    expect(resolve('127.0.0.1', 'garbage, 192.168.7.20')).toBe('192.168.7.20');
    expect(resolve('127.0.0.1', 'not-an-address')).toBe('127.0.0.1');
  });

  it('from anyone else: the peer (the header is not believed)', () => {
    expect(clientAddressResolver(['127.0.0.1'])('10.9.9.9', '1.2.3.4')).toBe('10.9.9.9');
  });

  it('IPv6 proxies and blocks', () => {
    const resolve = clientAddressResolver(['fd00::/8']);
    expect(resolve('fd00::1', '2001:db8::7')).toBe('2001:db8::7');
  });
});

describe('TrustedProxies in config.json', () => {
  it.each([['10.0.0.5'], ['10.0.0.0/24'], ['::1'], ['fd00::/8']])('accepts %s', (entry) => {
    expect(trustedProxyProblem(entry)).toBeNull();
    expect(validateConfig({ TrustedProxies: [entry] }).TrustedProxies).toEqual([entry]);
  });

  it('names every entry that is not an address or a block', () => {
    expect(() => validateConfig({ TrustedProxies: ['nginx', '10.0.0.0/33', '10.0.0.1/8/2'] })).toThrow(
      /"TrustedProxies" entry "nginx" is not an IP address or a CIDR block[\s\S]*"10\.0\.0\.0\/33" has a prefix length that does not fit its address[\s\S]*"10\.0\.0\.1\/8\/2" is not an IP address/,
    );
  });
});

describe('behind a trusted proxy, end to end (server.inject)', () => {
  it('the delivery history and the outbox record the client X-Forwarded-For names', async () => {
    const t = await testService({ TestMode: false, TrustedProxies: ['127.0.0.1'], Sorter: { Port: 1, ReconnectMaxMs: 200 } });
    try {
      await t.publish([{ Type: 'VERIFY', TrackID: '1', Barcode: 'B', Destination: 'D1', MessageCode: 212 }]);
      expect((await t.server.inject({ url: '/sortation?timeOut=0', headers: { 'x-forwarded-for': '192.168.7.20' } })).statusCode).toBe(212);
      await t.settled();
      await t.server.inject({
        method: 'POST',
        url: '/sortation',
        payload: { TrackID: '1', Destination: 'D1' },
        headers: { 'x-forwarded-for': '192.168.7.21' },
      });
      expect(t.service.db.prepare('SELECT client_address FROM delivered_history').pluck().all()).toEqual(['192.168.7.20']);
      expect(t.service.db.prepare('SELECT client_address FROM outbox').pluck().all()).toEqual(['192.168.7.21']);
    } finally {
      await t.close();
    }
  });
});
