/**
 * go-sockaddr's KnownRFCs (rfc.go in hashicorp/go-sockaddr): the networks each RFC number names, for the
 * `rfc` selector of include/exclude, and the pseudo-RFC of non-forwardable networks behind the
 * `forwardable` flag. "Private" in GetPrivateIP & co. means inside RFC 6890's special-purpose registry
 * (private use, shared address space, benchmarking, ULA...) and forwardable, so not loopback, link-local,
 * documentation or reserved space.
 */
import { containsNetwork, parseSockIp, type SockIp } from "./ip.ts";

/** go-sockaddr's ForwardingBlacklist: the pseudo-RFC number of the networks that are not forwardable. */
export const FORWARDING_BLACKLIST = 4294967295;

const RFC_TEXT: Readonly<Record<number, string>> = {
  919: "255.255.255.255/32",
  1112: "224.0.0.0/4",
  1122: "0.0.0.0/8 127.0.0.0/8",
  1918: "10.0.0.0/8 172.16.0.0/12 192.168.0.0/16",
  2544: "198.18.0.0/15",
  2765: "::ffff:0:0/96",
  2928: "2001::/16",
  3056: "2002::/16",
  3068: "192.88.99.0/24 2002:c058:6301::/120",
  3171: "224.0.0.0/4",
  3330: "0.0.0.0/8 10.0.0.0/8 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.2.0/24 192.88.99.0/24 192.168.0.0/16 198.18.0.0/15 224.0.0.0/4 240.0.0.0/4",
  3849: "2001:db8::/32",
  3927: "169.254.0.0/16",
  4038: "::ffff:0:0/96",
  4193: "fc00::/7",
  4291: "::/128 ::1/128 ::/96 ::ffff:0:0/96 fe80::/10 fec0::/10 ff00::/8",
  4380: "2001::/32",
  4773: "2001::/23",
  4843: "2001:10::/28",
  5180: "2001:200::/48",
  5735: "192.0.2.0/24 198.51.100.0/24 203.0.113.0/24 198.18.0.0/15",
  5737: "192.0.2.0/24 198.51.100.0/24 203.0.113.0/24",
  6052: "64:ff9b::/96",
  6333: "192.0.0.0/29",
  6598: "100.64.0.0/10",
  6666: "100::/64",
  6890:
    "0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16 172.16.0.0/12 192.0.0.0/24 192.0.0.0/29 192.0.2.0/24 192.88.99.0/24 " +
    "192.168.0.0/16 198.18.0.0/15 198.51.100.0/24 203.0.113.0/24 240.0.0.0/4 255.255.255.255/32 " +
    "::1/128 ::/128 64:ff9b::/96 ::ffff:0:0/96 100::/64 2001::/16 2002::/16 fc00::/7 fe80::/10",
  7335: "192.0.0.0/29",
  [FORWARDING_BLACKLIST]:
    "0.0.0.0/8 127.0.0.0/8 169.254.0.0/16 192.0.0.0/24 192.0.2.0/24 198.51.100.0/24 203.0.113.0/24 240.0.0.0/4 255.255.255.255/32 " +
    "::1/128 ::/128 ::ffff:0:0/96 2001:db8::/32 2001:10::/28 fe80::/10",
};

const RFC_NETS: ReadonlyMap<number, readonly SockIp[]> = new Map(
  Object.entries(RFC_TEXT).map(([n, text]) => [Number(n), text.split(" ").map((cidr) => parseSockIp(cidr)!)]),
);

/** The networks of a known RFC number, or undefined (go-sockaddr: "unsupported RFC"). */
export function rfcNetworks(rfc: number): readonly SockIp[] | undefined {
  return RFC_NETS.get(rfc);
}

/** go-sockaddr's IsRFC: `ip`'s network lies inside one of the RFC's networks. */
export function isRfc(rfc: number, ip: SockIp): boolean {
  return (RFC_NETS.get(rfc) ?? []).some((net) => containsNetwork(net, ip));
}
