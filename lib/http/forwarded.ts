// The client's address behind a reverse proxy: X-Forwarded-For, believed only from the proxies
// named in TrustedProxies (anyone can send the header).
import net from 'node:net';

/** An IPv4 client on a dual-stack listener shows as ::ffff:a.b.c.d: the same client. */
const plain = (address: string) => (address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address);

/** Whether an address is one of the trusted proxies. */
function proxyCheck(trustedProxies: readonly string[]): (address: string) => boolean {
  const trusted = new net.BlockList();
  for (const entry of trustedProxies) {
    const [address = '', bits] = entry.split('/');
    const type = net.isIPv4(address) ? 'ipv4' : 'ipv6';
    if (bits === undefined) trusted.addAddress(address, type);
    else trusted.addSubnet(address, Number(bits), type);
  }
  return (address) => net.isIP(address) !== 0 && trusted.check(address, net.isIPv4(address) ? 'ipv4' : 'ipv6');
}

/**
 * A resolver of the client's address: the peer's own, or, when the peer is a trusted proxy, the
 * nearest address in X-Forwarded-For that is not itself a trusted proxy (read from the right:
 * each proxy appends the address it received from, and only the trusted ones' entries can be
 * believed). Without TrustedProxies the header is ignored.
 */
export function clientAddressResolver(
  trustedProxies: readonly string[],
): (remote: string | undefined, forwardedFor: string | string[] | undefined) => string | null {
  if (trustedProxies.length === 0) return (remote) => (remote ? plain(remote) : null);
  const isTrusted = proxyCheck(trustedProxies);
  return (remote, forwardedFor) => {
    if (!remote) return null;
    let client = plain(remote);
    if (!isTrusted(client) || forwardedFor === undefined) return client;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map((h) => plain(h.trim()));
    for (const hop of hops.reverse()) {
      if (net.isIP(hop) === 0) break; // garbage: stop at the last address believed
      client = hop;
      if (!isTrusted(client)) break;
    }
    return client;
  };
}
