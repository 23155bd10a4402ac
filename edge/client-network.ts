/**
 * The network a client address stands for, as a rate-limit key: an IPv4 address is itself
 * (`ip:192.0.2.1`); an IPv6 address is its /64 (`ip6:2001:db8:0:1::/64`), since one subscriber is
 * usually handed a whole /64 and can rotate through its addresses at will. Anything that does not
 * parse as either is kept verbatim, so it still gets a bucket of its own.
 */
export function clientNetworkOf(address: string): string {
  const a = address.trim().toLowerCase();
  if (!a.includes(':')) return `ip:${a}`;
  const groups = ipv6Groups(a);
  if (!groups) return `ip:${a}`;
  // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 client it maps.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return `ip:${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  return `ip6:${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (with `::` and a trailing dotted IPv4 part), or null. */
function ipv6Groups(a: string): number[] | null {
  const zone = a.indexOf('%');
  let text = zone < 0 ? a : a.slice(0, zone);
  const tail: number[] = [];
  const dotted = /(?:^|:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const b = dotted.slice(1, 5).map(Number);
    if (b.some((x) => x > 255)) return null;
    tail.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
    text = text.slice(0, text.length - dotted[0].length + (dotted[0].startsWith(':') ? 1 : 0));
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  if ([...head, ...rest].some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  const known = head.length + rest.length + tail.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  const zeros = Array.from({ length: 8 - known }, () => 0);
  return [...head.map((g) => parseInt(g, 16)), ...zeros, ...rest.map((g) => parseInt(g, 16)), ...tail];
}
