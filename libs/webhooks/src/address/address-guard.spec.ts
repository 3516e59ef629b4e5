import { AddressRefusedError, checkUrlSyntax, HTTPS_REQUIRED, isPublicAddress, resolveAllowed } from './address-guard';
import { systemResolver } from './dns-resolver';

describe('address guard', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'IPv6 loopback'],
    ['10.0.0.1', '10/8'],
    ['10.255.255.254', '10/8'],
    ['172.16.0.1', '172.16/12'],
    ['172.31.255.1', '172.16/12'],
    ['192.168.1.1', '192.168/16'],
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.1.1', 'link-local'],
    ['100.64.0.1', 'CGNAT 100.64/10'],
    ['100.127.255.254', 'CGNAT 100.64/10'],
    ['::ffff:127.0.0.1', 'IPv4-mapped IPv6'],
    ['::ffff:8.8.8.8', 'IPv4-mapped IPv6, even of a public address'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'IPv6 unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'IPv6 multicast'],
    ['240.0.0.1', 'reserved'],
    ['255.255.255.255', 'broadcast'],
    ['fe80::1', 'IPv6 link-local'],
    ['fc00::1', 'IPv6 unique local'],
    ['fd00:ec2::254', 'IPv6 unique local (metadata)'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['2002:7f00:1::', '6to4'],
    ['not-an-ip', 'not an address'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '172.32.0.1', '100.128.0.1'])(
    'accepts the public address %s',
    (address) => expect(isPublicAddress(address)).toBe(true),
  );

  it.each([
    'https://127.0.0.1/hook',
    'https://[::1]/hook',
    'https://10.1.2.3/hook',
    'https://172.16.5.4/hook',
    'https://192.168.0.10/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.1.1/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://2130706433/',
    'https://0x7f000001/',
    'https://017700000001/',
    'https://0x7f.1/',
    'https://127.1/',
  ])('refuses the URL %s before any DNS', (url) => {
    const result = checkUrlSyntax(url, false);
    expect(result).toEqual({ problem: expect.objectContaining({ code: 'not_public' }) });
  });

  it('allows those addresses when private networks are allowed', () => {
    expect(checkUrlSyntax('https://127.0.0.1:8443/hook', true)).toEqual({ url: expect.any(URL) });
  });

  it('refuses http: with a message saying HTTPS is required', () => {
    expect(checkUrlSyntax('http://example.com/hook', false)).toEqual({
      problem: { code: 'not_https', message: HTTPS_REQUIRED },
    });
  });

  it.each([
    'example.com/hook',
    '/relative',
    'ftp://example.com/',
    'https://user:pw@example.com/',
    'https://example.com/#x',
    'nonsense',
  ])('refuses %s as not an absolute https URL', (url) =>
    expect(checkUrlSyntax(url, false)).toEqual({ problem: expect.objectContaining({ code: 'invalid' }) }),
  );

  it('refuses a hostname resolving to loopback (the system resolver, localhost)', async () => {
    await expect(resolveAllowed('localhost', systemResolver, false)).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it('refuses a name when any of its addresses is private', async () => {
    const resolver = async () => [
      { address: '93.184.216.34', family: 4 as const },
      { address: '10.0.0.5', family: 4 as const },
    ];
    await expect(resolveAllowed('mixed.example', resolver, false)).rejects.toBeInstanceOf(AddressRefusedError);
  });

  it('returns the checked address to connect to', async () => {
    const resolver = async () => [{ address: '93.184.216.34', family: 4 as const }];
    await expect(resolveAllowed('public.example', resolver, false)).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    await expect(resolveAllowed('localhost', systemResolver, true)).resolves.toEqual(
      expect.objectContaining({ address: expect.stringMatching(/^(127\.0\.0\.1|::1)$/) }),
    );
  });
});
