import { describe, expect, test } from "bun:test";
import { defaultRouteInterface, linuxFlags, readHostNetwork, type HostNetworkSources, type OsInterfaceAddress } from "./host_network.ts";

const ROUTE = `Iface	Destination	Gateway 	Flags	RefCnt	Use	Metric	Mask		MTU	Window	IRTT
eth1	00000000	0101A8C0	0003	0	0	600	00000000	0	0	0
eth0	00000000	0102000A	0003	0	0	100	00000000	0	0	0
eth0	0002000A	00000000	0001	0	0	100	00FFFFFF	0	0	0
docker0	000011AC	00000000	0001	0	0	0	0000FFFF	0	0	0
`;
const IPV6_ROUTE = `fd000000000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0
00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
00000000000000000000000000000000 00 00000000000000000000000000000000 00 fd000000000000000000000000000001 00000400 00000003 00000000 00000003     wg0
`;

describe("defaultRouteInterface", () => {
  test("the IPv4 default gateway route with the lowest metric", () => {
    expect(defaultRouteInterface(ROUTE, IPV6_ROUTE)).toBe("eth0");
  });
  test("else the IPv6 one, never lo's unreachable route", () => {
    expect(defaultRouteInterface(ROUTE.split("\n").filter((l) => !l.includes("\t00000000\t0")).join("\n"), IPV6_ROUTE)).toBe("wg0");
    expect(defaultRouteInterface(undefined, IPV6_ROUTE)).toBe("wg0");
  });
  test("none: no file, no default route, or a default route that is down or has no gateway", () => {
    expect(defaultRouteInterface(undefined, undefined)).toBeUndefined();
    const header = ROUTE.split("\n")[0];
    expect(defaultRouteInterface(`${header}\nwg0\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n`, "")).toBeUndefined();
    expect(defaultRouteInterface(`${header}\neth0\t00000000\t0102000A\t0002\t0\t0\t0\t00000000\t0\t0\t0\n`, "")).toBeUndefined();
  });
});

test("linuxFlags maps IFF bits to Go's net.Flags, running from the operstate", () => {
  expect(linuxFlags("0x1003\n", "up\n")).toEqual(["up", "broadcast", "multicast", "running"]);
  expect(linuxFlags("0x9", "unknown")).toEqual(["up", "loopback", "running"]);
  expect(linuxFlags("0x1091", "up")).toEqual(["up", "pointtopoint", "multicast", "running"]);
  expect(linuxFlags("0x1002", "down")).toEqual(["broadcast", "multicast"]);
  expect(linuxFlags("0x1003", undefined)).toEqual(["up", "broadcast", "multicast"]);
});

const v4 = (address: string, cidr: string, extra: Partial<OsInterfaceAddress> = {}): OsInterfaceAddress => ({ address, netmask: "", family: "IPv4", internal: false, cidr, ...extra });
const v6 = (address: string, cidr: string, extra: Partial<OsInterfaceAddress> = {}): OsInterfaceAddress => ({ address, netmask: "", family: "IPv6", internal: false, cidr, ...extra });

describe("readHostNetwork", () => {
  const osInterfaces = {
    eth0: [v6("fe80::1", "fe80::1/64", { mac: "02:00:00:00:00:01" }), v4("10.0.2.15", "10.0.2.15/24", { mac: "02:00:00:00:00:01" })],
    lo: [v4("127.0.0.1", "127.0.0.1/8", { internal: true, mac: "00:00:00:00:00:00" }), v6("::1", "::1/128", { internal: true })],
    empty: [],
  };

  test("on Linux: indexes, flags and MTU from /sys, IPv4 first, the default route from /proc", () => {
    const files: Record<string, string> = {
      "/sys/class/net/eth0/ifindex": "2\n", "/sys/class/net/eth0/flags": "0x1003\n", "/sys/class/net/eth0/operstate": "up\n", "/sys/class/net/eth0/mtu": "1500\n",
      "/sys/class/net/lo/ifindex": "1\n", "/sys/class/net/lo/flags": "0x9\n", "/sys/class/net/lo/operstate": "unknown\n", "/sys/class/net/lo/mtu": "65536\n",
      "/proc/net/route": ROUTE,
    };
    const sources: HostNetworkSources = { interfaces: () => osInterfaces, readText: (p) => files[p] };
    expect(readHostNetwork(sources)).toEqual({
      defaultInterface: "eth0",
      interfaces: [
        { name: "lo", index: 1, flags: ["up", "loopback", "running"], addresses: ["127.0.0.1/8", "::1/128"], mac: "", mtu: 65536 },
        { name: "eth0", index: 2, flags: ["up", "broadcast", "multicast", "running"], addresses: ["10.0.2.15/24", "fe80::1/64"], mac: "02:00:00:00:00:01", mtu: 1500 },
      ],
    });
  });

  test("elsewhere: listing order, inferred flags, prefixes from netmasks, no default route", () => {
    const sources: HostNetworkSources = {
      interfaces: () => ({
        en0: [{ address: "192.168.1.5", netmask: "255.255.254.0", family: 4, internal: false }, { address: "fe80::1%en0", netmask: "ffff:ffff:ffff:ffff::", family: 6, internal: false }],
        lo0: [{ address: "127.0.0.1", netmask: "255.0.0.0", family: "IPv4", internal: true }],
      }),
      readText: () => undefined,
    };
    expect(readHostNetwork(sources)).toEqual({
      interfaces: [
        { name: "en0", index: 1, flags: ["up", "broadcast", "multicast", "running"], addresses: ["192.168.1.5/23", "fe80::1/64"], mac: "" },
        { name: "lo0", index: 2, flags: ["up", "loopback", "running"], addresses: ["127.0.0.1/8"], mac: "" },
      ],
    });
  });

  test("the real host lists its loopback interface", () => {
    const host = readHostNetwork();
    expect(host.interfaces.some((i) => i.addresses.includes("127.0.0.1/8"))).toBe(true);
  });
});
