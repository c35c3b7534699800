import { describe, expect, test } from "bun:test";
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

  test("Consul's errors, and Causeway's for templates and ports out of range", () => {
    expect(() => parseServiceAddress("10.0.0.1")).toThrow('Error parsing address "10.0.0.1": address 10.0.0.1: missing port in address');
    expect(() => parseServiceAddress("10.0.0.1:https")).toThrow('Error parsing port "https": strconv.Atoi: parsing "https": invalid syntax');
    expect(() => parseServiceAddress("10.0.0.1:99999999999999999999")).toThrow("value out of range");
    expect(() => parseServiceAddress("10.0.0.1:65536")).toThrow('Error parsing port "65536": must be between 0 and 65535');
    expect(() => parseServiceAddress("10.0.0.1:-1")).toThrow("must be between 0 and 65535");
    expect(() => parseServiceAddress('{{ GetPrivateIP }}:8443')).toThrow("go-sockaddr templates are not supported");
    expect(() => parseBindAddress("lan")).toThrow('Missing "=" in argument: lan');
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
