import { describe, expect, test } from "bun:test";
import type { SockaddrHost } from "../../../lib/index.ts";
import { canBind, goSplitHostPort, joinHostPort, localInterfaceIps, parseBindAddress, parseServiceAddress } from "./envoy_gateway_address.ts";

describe("goSplitHostPort (Go's net.SplitHostPort)", () => {
  test("splits host and port, brackets removed, either may be empty", () => {
    expect(goSplitHostPort("10.0.0.1:8443")).toEqual({ host: "10.0.0.1", port: "8443" });
    expect(goSplitHostPort("[2001:db8::1]:443")).toEqual({ host: "2001:db8::1", port: "443" });
    expect(goSplitHostPort(":8443")).toEqual({ host: "", port: "8443" });
    expect(goSplitHostPort("gw.example:")).toEqual({ host: "gw.example", port: "" });
  });

  test("Go's errors", () => {
    const err = (s: string) => () => goSplitHostPort(s);
    expect(err("10.0.0.1")).toThrow("address 10.0.0.1: missing port in address");
    expect(err("2001:db8::1:80")).toThrow("address 2001:db8::1:80: too many colons in address");
    expect(err("[2001:db8::1]")).toThrow("address [2001:db8::1]: missing port in address");
    expect(err("[2001:db8::1:80")).toThrow("address [2001:db8::1:80: missing ']' in address");
    expect(err("[::1]:80:90")).toThrow("address [::1]:80:90: too many colons in address");
    expect(err("[::1]x:80")).toThrow("address [::1]x:80: missing port in address");
    expect(err("a[b:80")).toThrow("address a[b:80: unexpected '[' in address");
    expect(err("a]b:80")).toThrow("address a]b:80: unexpected ']' in address");
  });
});

describe("parseServiceAddress and parseBindAddress", () => {
  test("ip:port, the 8443 default for an empty port, signs as Atoi reads them", () => {
    expect(parseServiceAddress("10.0.0.1:443")).toEqual({ Address: "10.0.0.1", Port: 443 });
    expect(parseServiceAddress("10.0.0.1:")).toEqual({ Address: "10.0.0.1", Port: 8443 });
    expect(parseServiceAddress("[::1]:+80")).toEqual({ Address: "::1", Port: 80 });
    expect(parseServiceAddress(":0")).toEqual({ Address: "", Port: 0 });
    expect(parseBindAddress("lan=0.0.0.0:8443")).toEqual({ name: "lan", address: { Address: "0.0.0.0", Port: 8443 } });
    expect(parseBindAddress("=1.2.3.4:5")).toEqual({ name: "", address: { Address: "1.2.3.4", Port: 5 } });
  });

  test("Consul's errors, and Causeway's for ports out of range", () => {
    expect(() => parseServiceAddress("10.0.0.1")).toThrow('Error parsing address "10.0.0.1": address 10.0.0.1: missing port in address');
    expect(() => parseServiceAddress("10.0.0.1:https")).toThrow('Error parsing port "https": strconv.Atoi: parsing "https": invalid syntax');
    expect(() => parseServiceAddress("10.0.0.1:99999999999999999999")).toThrow("value out of range");
    expect(() => parseServiceAddress("10.0.0.1:65536")).toThrow('Error parsing port "65536": must be between 0 and 65535');
    expect(() => parseServiceAddress("10.0.0.1:-1")).toThrow("must be between 0 and 65535");
    expect(() => parseBindAddress("lan")).toThrow('Missing "=" in argument: lan');
  });
});

describe("go-sockaddr templates in the address flags", () => {
  const host: SockaddrHost = {
    defaultInterface: "eth0",
    interfaces: [
      { name: "lo", index: 1, flags: ["up", "loopback", "running"], addresses: ["127.0.0.1/8", "::1/128"] },
      { name: "eth0", index: 2, flags: ["up", "broadcast", "multicast", "running"], addresses: ["10.0.2.15/24"] },
      { name: "eth1", index: 3, flags: ["up", "broadcast", "multicast", "running"], addresses: ["52.95.110.1/24", "2600:1f18::10/64"] },
    ],
  };
  const readHost = () => host;

  test("are evaluated before the address is split, as Consul's parseAddress does", () => {
    expect(parseServiceAddress("{{ GetPrivateIP }}:8443", readHost)).toEqual({ Address: "10.0.2.15", Port: 8443 });
    expect(parseServiceAddress("{{ GetPublicIP }}:", readHost)).toEqual({ Address: "52.95.110.1", Port: 8443 });
    expect(parseServiceAddress('[{{ GetAllInterfaces | include "type" "ipv6" | include "name" "eth1" | attr "address" }}]:443', readHost)).toEqual({ Address: "2600:1f18::10", Port: 443 });
    expect(parseBindAddress('wan={{ GetInterfaceIP "eth1" }}:8443', readHost)).toEqual({ name: "wan", address: { Address: "52.95.110.1", Port: 8443 } });
  });

  test("the host is not read for a plain address", () => {
    const unread = () => {
      throw new Error("read");
    };
    expect(parseServiceAddress("10.0.0.1:443", unread)).toEqual({ Address: "10.0.0.1", Port: 443 });
  });

  test("a port is still required, and the template must give exactly one address", () => {
    expect(() => parseServiceAddress("{{ GetPrivateIP }}", readHost)).toThrow('Error parsing address "10.0.2.15": address 10.0.2.15: missing port in address (from "{{ GetPrivateIP }}")');
    expect(() => parseServiceAddress('{{ GetInterfaceIP "lo" }}:8443', readHost))
      .toThrow('Error parsing address "{{ GetInterfaceIP \\"lo\\" }}:8443": the template gave no address (GetInterfaceIP skips addresses that are not forwardable');
    expect(() => parseServiceAddress('{{ GetInterfaceIPs "eth" }}:8443', readHost)).toThrow("too many colons in address");
    expect(() => parseServiceAddress('{{ GetAllInterfaces | include "type" "ipv4" | exclude "name" "lo" | join "address" " " }}:8443', readHost))
      .toThrow("the template gave several addresses (10.0.2.15 52.95.110.1); give one");
  });

  test("template errors and an unreadable host are Consul's \"Error parsing address\"", () => {
    expect(() => parseServiceAddress("{{ GetPrivateAddress }}:8443", readHost)).toThrow('Error parsing address "{{ GetPrivateAddress }}:8443": function "GetPrivateAddress" not defined');
    const denied = () => {
      throw new Error("permission denied");
    };
    expect(() => parseServiceAddress("{{ GetPrivateIP }}:8443", denied)).toThrow("reading the host's network interfaces failed: permission denied");
  });
});

describe("canBind", () => {
  const host = ["127.0.0.1", "::1", "10.1.2.3", "fe80::1%eth0", "2001:db8:0:0::5"];
  test("IP literals that are this host's, compared in canonical form", () => {
    expect(canBind("10.1.2.3", host)).toBe(true);
    expect(canBind("0:0:0:0:0:0:0:1", host)).toBe(true);
    expect(canBind("2001:DB8::5", host)).toBe(true);
    expect(canBind("fe80::1", host)).toBe(true);
    expect(canBind("::ffff:10.1.2.3", host)).toBe(true);
  });
  test("not this host's, empty, or not an IP", () => {
    expect(canBind("10.1.2.4", host)).toBe(false);
    expect(canBind("", host)).toBe(false);
    expect(canBind("localhost", host)).toBe(false);
    expect(canBind("10.1.2.3", [])).toBe(false);
  });
  test("the host's own interfaces include loopback", () => {
    expect(canBind("127.0.0.1", localInterfaceIps())).toBe(true);
  });
});

test("joinHostPort brackets IPv6", () => {
  expect(joinHostPort("10.0.0.1", 8443)).toBe("10.0.0.1:8443");
  expect(joinHostPort("2001:db8::5", 8443)).toBe("[2001:db8::5]:8443");
});
