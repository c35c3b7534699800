/**
 * A fixed host for go-sockaddr template tests: loopback, a private eth0 with the default route, a public
 * eth1, a docker bridge, an IPv6-only WireGuard link with a ULA, and an interface that is down.
 */
import type { SockaddrHost } from "./host.ts";

export const FAKE_HOST: SockaddrHost = {
  defaultInterface: "eth0",
  interfaces: [
    { name: "lo", index: 1, flags: ["up", "loopback", "running"], addresses: ["127.0.0.1/8", "::1/128"], mtu: 65536, mac: "" },
    { name: "eth0", index: 2, flags: ["up", "broadcast", "multicast", "running"], addresses: ["10.0.2.15/24", "fe80::a00:27ff:fe4e:66a1/64"], mtu: 1500, mac: "08:00:27:4e:66:a1" },
    { name: "eth1", index: 3, flags: ["up", "broadcast", "multicast", "running"], addresses: ["52.95.110.1/24", "2600:1f18:0:1::10/64"], mtu: 1500, mac: "08:00:27:4e:66:a2" },
    { name: "docker0", index: 4, flags: ["up", "broadcast", "multicast"], addresses: ["172.17.0.1/16"], mtu: 1500, mac: "02:42:d5:11:22:33" },
    { name: "wg0", index: 5, flags: ["up", "pointtopoint", "running"], addresses: ["fd12:3456::1/64"], mtu: 1420 },
    { name: "down0", index: 6, flags: ["broadcast", "multicast"], addresses: ["192.168.99.1/24"], mtu: 1500 },
  ],
};
