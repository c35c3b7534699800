import { describe, expect, test } from "bun:test";
import { emptyTemplateHint, evaluateSockaddrTemplate, SockaddrTemplateError, type SockaddrHost } from "./index.ts";
import { FAKE_HOST } from "./testdata.ts";

const run = (template: string, host: SockaddrHost = FAKE_HOST) => evaluateSockaddrTemplate(template, host);
const ALL = "127.0.0.1 ::1 10.0.2.15 fe80::a00:27ff:fe4e:66a1 52.95.110.1 2600:1f18:0:1::10 172.17.0.1 fd12:3456::1 192.168.99.1";

/** [template, result] rows over FAKE_HOST. */
const table = (rows: readonly (readonly [string, string])[]) => {
  for (const [template, want] of rows) test(template, () => expect(run(template)).toBe(want));
};

describe("sources", () => {
  table([
    ['{{ GetAllInterfaces | join "address" " " }}', ALL],
    ['{{ . | join "address" " " }}', ALL],
    ['{{ GetDefaultInterfaces | join "address" " " }}', "10.0.2.15 fe80::a00:27ff:fe4e:66a1"],
    // Forwardable, up, default interface first, IPv4 first, larger networks first, inside RFC 6890.
    ['{{ GetPrivateInterfaces | join "address" " " }}', "10.0.2.15 172.17.0.1 fd12:3456::1"],
    ['{{ GetPublicInterfaces | join "address" " " }}', "52.95.110.1 2600:1f18:0:1::10"],
    ["{{ GetPrivateIP }}", "10.0.2.15"],
    // Up or not, default route or not; loopback and link-local are not forwardable.
    ["{{ GetPrivateIPs }}", "172.17.0.1 10.0.2.15 192.168.99.1 fd12:3456::1"],
    ["{{ GetPublicIP }}", "52.95.110.1"],
    ["{{ GetPublicIPs }}", "52.95.110.1 2600:1f18:0:1::10"],
    ['{{ GetInterfaceIP "eth0" }}', "10.0.2.15"],
    ['{{ GetInterfaceIP "eth" }}', "10.0.2.15"],
    ['{{ GetInterfaceIP "^wg" }}', "fd12:3456::1"],
    // go-sockaddr's GetInterfaceIP keeps forwardable addresses only: never loopback (go-sockaddr issue #31).
    ['{{ GetInterfaceIP "lo" }}', ""],
    ['{{ GetInterfaceIP "nope" }}', ""],
    ['{{ GetInterfaceIPs "eth0" }}', "10.0.2.15 fe80::a00:27ff:fe4e:66a1"],
    ['{{ GetInterfaceIPs "lo" }}', "127.0.0.1 ::1"],
    ['{{ GetInterfaceIPs "nope" }}', ""],
  ]);

  test("the default route orders the private and public lists; without one, GetDefaultInterfaces fails", () => {
    expect(run("{{ GetPrivateIP }}", { ...FAKE_HOST, defaultInterface: "eth1" })).toBe("172.17.0.1");
    const noRoute: SockaddrHost = { interfaces: FAKE_HOST.interfaces };
    expect(run("{{ GetPrivateIP }}", noRoute)).toBe("172.17.0.1");
    expect(() => run("{{ GetDefaultInterfaces }}", noRoute)).toThrow("at <GetDefaultInterfaces>: error calling GetDefaultInterfaces: no default interface found");
    expect(run('{{ GetAllInterfaces | sort "default" | attr "address" }}', noRoute)).toBe("127.0.0.1");
  });

  test("a host with nothing private or public gives empty strings, not errors", () => {
    const bare: SockaddrHost = { defaultInterface: "lo", interfaces: [FAKE_HOST.interfaces[0]!] };
    expect(["{{ GetPrivateIP }}", "{{ GetPublicIP }}", "{{ GetPrivateIPs }}", "{{ GetPublicIPs }}"].map((t) => run(t, bare))).toEqual(["", "", "", ""]);
    expect(run("{{ GetPrivateInterfaces }}", bare)).toBe("[]");
  });
});

describe("include and exclude", () => {
  table([
    ['{{ GetAllInterfaces | include "name" "^eth" | join "name" " " }}', "eth0 eth0 eth1 eth1"],
    ['{{ GetAllInterfaces | exclude "name" "^(lo|eth)" | join "name" " " }}', "docker0 wg0 down0"],
    ['{{ GetAllInterfaces | include "name" `^eth0$` | attr "address" }}', "10.0.2.15"],
    ['{{ GetAllInterfaces | include "name" "(?i)^ETH1" | attr "address" }}', "52.95.110.1"],
    ['{{ GetAllInterfaces | include "type" "IPv4" | join "address" " " }}', "127.0.0.1 10.0.2.15 52.95.110.1 172.17.0.1 192.168.99.1"],
    ['{{ GetAllInterfaces | exclude "type" "ipv4" | join "address" " " }}', "::1 fe80::a00:27ff:fe4e:66a1 2600:1f18:0:1::10 fd12:3456::1"],
    ['{{ GetAllInterfaces | include "type" "unix" | join "address" " " }}', ""],
    // go-sockaddr's IfByType takes an address once per listed type it matches.
    ['{{ GetAllInterfaces | include "type" "ip|ipv4" | include "name" "docker0" | join "address" " " }}', "172.17.0.1 172.17.0.1"],
    ['{{ GetAllInterfaces | exclude "flags" "up" | join "name" " " }}', "down0"],
    ['{{ GetAllInterfaces | include "flags" "loopback" | join "address" " " }}', "127.0.0.1 ::1"],
    ['{{ GetAllInterfaces | include "flags" "point-to-point" | join "address" " " }}', "fd12:3456::1"],
    ['{{ GetAllInterfaces | include "flag" "broadcast" | join "name" " " }}', "eth0 eth0 eth1 eth1 docker0 down0"],
    ['{{ GetAllInterfaces | include "flags" "multicast|broadcast" | join "name" " " }}', "eth0 eth0 eth1 eth1 docker0 down0"],
    ['{{ GetAllInterfaces | include "flags" "forwardable" | join "address" " " }}', "10.0.2.15 52.95.110.1 2600:1f18:0:1::10 172.17.0.1 fd12:3456::1 192.168.99.1"],
    ['{{ GetAllInterfaces | include "flags" "link-local unicast" | join "address" " " }}', "fe80::a00:27ff:fe4e:66a1"],
    ['{{ GetAllInterfaces | include "flags" "global unicast" | join "address" " " }}', "10.0.2.15 52.95.110.1 2600:1f18:0:1::10 172.17.0.1 fd12:3456::1 192.168.99.1"],
    // Interface bits and address traits in one list match on either (Consul's docs example).
    ['{{ GetAllInterfaces | include "name" "^eth" | include "flags" "forwardable|up" | attr "address" }}', "10.0.2.15"],
    ['{{ GetAllInterfaces | exclude "flags" "forwardable|up" | join "address" " " }}', ""],
    ['{{ GetAllInterfaces | include "rfc" "1918" | join "address" " " }}', "10.0.2.15 172.17.0.1 192.168.99.1"],
    ['{{ GetAllInterfaces | include "rfcs" "1918|4193" | join "address" " " }}', "10.0.2.15 172.17.0.1 192.168.99.1 fd12:3456::1"],
    ['{{ GetAllInterfaces | exclude "rfc" "6890" | join "address" " " }}', "52.95.110.1 2600:1f18:0:1::10"],
    ['{{ GetAllInterfaces | include "rfc" "6598" | join "address" " " }}', ""],
    ['{{ GetAllInterfaces | include "network" "10.0.0.0/8" | attr "address" }}', "10.0.2.15"],
    ['{{ GetAllInterfaces | include "network" "172.16.0.0/12|192.168.0.0/16" | join "address" " " }}', "172.17.0.1 192.168.99.1"],
    ['{{ GetAllInterfaces | include "network" "fd00::/8" | join "address" " " }}', "fd12:3456::1"],
    // Containment is of the address's whole network: a /24 is not inside a /25.
    ['{{ GetAllInterfaces | include "network" "10.0.2.0/25" | join "address" " " }}', ""],
    // A size beyond 32 is an error while IPv4 addresses are in the list (go-sockaddr's IfByMaskSize).
    ['{{ GetAllInterfaces | include "type" "ipv6" | include "size" "64" | join "address" " " }}', "fe80::a00:27ff:fe4e:66a1 2600:1f18:0:1::10 fd12:3456::1"],
    ['{{ GetAllInterfaces | exclude "size" "24" | join "address" " " }}', "127.0.0.1 ::1 fe80::a00:27ff:fe4e:66a1 2600:1f18:0:1::10 172.17.0.1 fd12:3456::1"],
    ['{{ GetAllInterfaces | include "address" "^10\\\\." | attr "address" }}', "10.0.2.15"],
    ['{{ GetAllInterfaces | include "port" "0" | limit 1 | attr "address" }}', "127.0.0.1"],
  ]);
});

describe("sort, limit, offset, unique", () => {
  const v4 = 'GetAllInterfaces | include "type" "ipv4"';
  table([
    [`{{ ${v4} | sort "address" | join "address" " " }}`, "10.0.2.15 52.95.110.1 127.0.0.1 172.17.0.1 192.168.99.1"],
    [`{{ ${v4} | sort "-address" | join "address" " " }}`, "192.168.99.1 172.17.0.1 127.0.0.1 52.95.110.1 10.0.2.15"],
    [`{{ ${v4} | sort "size" | join "address" " " }}`, "127.0.0.1 172.17.0.1 10.0.2.15 52.95.110.1 192.168.99.1"],
    [`{{ ${v4} | sort "private" | join "address" " " }}`, "127.0.0.1 10.0.2.15 172.17.0.1 192.168.99.1 52.95.110.1"],
    ['{{ GetAllInterfaces | sort "name" | join "name" " " }}', "docker0 down0 eth0 eth0 eth1 eth1 lo lo wg0"],
    ['{{ GetAllInterfaces | sort "-name" | unique "name" | join "name" " " }}', "wg0 lo eth1 eth0 down0 docker0"],
    ['{{ GetAllInterfaces | sort "-type" | join "address" " " }}', "::1 fe80::a00:27ff:fe4e:66a1 2600:1f18:0:1::10 fd12:3456::1 127.0.0.1 10.0.2.15 52.95.110.1 172.17.0.1 192.168.99.1"],
    ['{{ GetAllInterfaces | sort "default" | limit 2 | join "address" " " }}', "10.0.2.15 fe80::a00:27ff:fe4e:66a1"],
    ['{{ GetAllInterfaces | sort "-default" | offset -2 | join "address" " " }}', "10.0.2.15 fe80::a00:27ff:fe4e:66a1"],
    [
      '{{ GetAllInterfaces | sort "type, -size ,+address" | join "address" " " }}',
      "10.0.2.15 52.95.110.1 192.168.99.1 172.17.0.1 127.0.0.1 ::1 2600:1f18:0:1::10 fd12:3456::1 fe80::a00:27ff:fe4e:66a1",
    ],
    ['{{ GetAllInterfaces | limit 0 | join "address" " " }}', ""],
    ['{{ GetAllInterfaces | limit 99 | join "name" "," }}', "lo,lo,eth0,eth0,eth1,eth1,docker0,wg0,down0"],
    ['{{ GetAllInterfaces | offset 7 | join "address" " " }}', "fd12:3456::1 192.168.99.1"],
    ['{{ GetAllInterfaces | offset -1 | attr "name" }}', "down0"],
    ['{{ GetAllInterfaces | unique "name" | join "name" " " }}', "lo eth0 eth1 docker0 wg0 down0"],
    ['{{ GetAllInterfaces | include "type" "ip|ipv4" | unique "address" | join "address" " " }}', ALL],
  ]);
});

describe("attr, join, math", () => {
  const eth0 = 'GetAllInterfaces | include "name" "eth0"';
  const wg0 = 'GetAllInterfaces | include "name" "wg0"';
  const attrs: readonly [string, string, string][] = [
    [eth0, "address", "10.0.2.15"], [eth0, "name", "eth0"], [eth0, "flags", "up|broadcast|multicast|running"], [eth0, "port", "0"],
    [eth0, "mask_bits", "24"], [eth0, "network", "10.0.2.0"], [eth0, "netmask", "255.255.255.0"], [eth0, "size", "256"],
    [eth0, "broadcast", "10.0.2.255"], [eth0, "type", "IPv4"], [eth0, "string", "10.0.2.15/24"], [eth0, "host", "10.0.2.15"],
    [eth0, "first_usable", "10.0.2.1"], [eth0, "last_usable", "10.0.2.254"], [eth0, "octets", "10 0 2 15"], [eth0, "hex", "0a00020f"],
    [eth0, "uint32", "167772687"], [eth0, "binary", "00001010000000000000001000001111"], [eth0, "ADDRESS", "10.0.2.15"],
    [wg0, "address", "fd12:3456::1"], [wg0, "network", "fd12:3456::"], [wg0, "netmask", "ffff:ffff:ffff:ffff::"], [wg0, "size", "18446744073709551616"],
    [wg0, "type", "IPv6"], [wg0, "string", "fd12:3456::1/64"], [wg0, "first_usable", "fd12:3456::"], [wg0, "last_usable", "fd12:3456::ffff:ffff:ffff:ffff"],
    [wg0, "uint128", "336389205775958708855571813486699741185"], [wg0, "flags", "up|pointtopoint|running"], [wg0, "hex", "fd123456000000000000000000000001"],
  ];
  for (const [src, name, want] of attrs) test(`${name} of ${src}`, () => expect(run(`{{ ${src} | attr "${name}" }}`)).toBe(want));

  const docker = 'GetAllInterfaces | include "name" "docker0"';
  table([
    ['{{ GetAllInterfaces | include "name" "nope" | attr "address" }}', ""],
    ['{{ GetPrivateInterfaces | join "name" ", " }}', "eth0, docker0, wg0"],
    [`{{ ${docker} | math "address" "+1" | attr "address" }}`, "172.17.0.2"],
    [`{{ ${docker} | math "address" "-2" | attr "address" }}`, "172.16.255.255"],
    [`{{ ${docker} | math "network" "+2" | attr "address" }}`, "172.17.0.2"],
    [`{{ ${docker} | math "network" "-1" | attr "address" }}`, "172.17.255.255"],
    [`{{ ${docker} | math "network" "-2" | attr "address" }}`, "172.17.255.254"],
    [`{{ ${docker} | math "mask" "8" | attr "string" }}`, "172.0.0.0/8"],
    [`{{ ${docker} | math "mask" "24" | attr "string" }}`, "172.17.0.0/16"],
    [`{{ ${wg0} | math "address" "+1" | attr "address" }}`, "fd12:3456::2"],
    [`{{ ${wg0} | math "network" "-1" | attr "address" }}`, "fd12:3456::ffff:ffff:ffff:ffff"],
    ['{{ GetAllInterfaces | include "address" "^255" | math "address" "+1" | attr "address" }}', ""],
  ]);

  test("address arithmetic wraps at the family's width", () => {
    const top: SockaddrHost = { interfaces: [{ name: "x", index: 1, flags: ["up"], addresses: ["255.255.255.255/32"] }] };
    expect(run('{{ GetAllInterfaces | math "address" "+1" | attr "address" }}', top)).toBe("0.0.0.0");
  });
});

describe("template text", () => {
  table([
    ["bind {{ GetPrivateIP }} end", "bind 10.0.2.15 end"],
    ["{{ GetPrivateIP }}:8301", "10.0.2.15:8301"],
    ["[{{ GetInterfaceIP \"wg0\" }}]:8443", "[fd12:3456::1]:8443"],
    ["127.0.0.1 {{ GetPrivateIP }}", "127.0.0.1 10.0.2.15"],
    ["no template at all", "no template at all"],
    ["a  {{- GetPrivateIP -}}  b", "a10.0.2.15b"],
    ["a{{/* a comment */}}b", "ab"],
    ["a {{- /* trimmed */ -}} b", "ab"],
    ["{{ \"x\\ty\" }}|{{ `raw\\n` }}|{{ 42 }}|{{ true }}", "x\ty|raw\\n|42|true"],
    ['{{ join "address" " " (GetAllInterfaces | include "name" "wg0") }}', "fd12:3456::1"],
    ['{{ limit 1 GetPrivateInterfaces | attr "address" }}', "10.0.2.15"],
    ["{{ GetDefaultInterfaces | limit 1 }}", "[10.0.2.15/24 {2 1500 eth0 08:00:27:4e:66:a1 up|broadcast|multicast|running}]"],
    ['{{ GetAllInterfaces | include "name" "^lo$" | limit 1 }}', "[127.0.0.1/8 {1 65536 lo  up|loopback|running}]"],
  ]);
});

describe("errors", () => {
  const errors: readonly [string, string][] = [
    ["{{ Foo }}", 'function "Foo" not defined'],
    ["{{ GetPrivateIP", "unclosed action"],
    ["{{ }}", "missing value for command"],
    ["{{ GetAllInterfaces | }}", "missing value for command"],
    ["{{ (GetAllInterfaces }}", "unclosed left paren"],
    ["{{ GetAllInterfaces) }}", "unexpected right paren"],
    ['{{ GetAllInterfaces | "x" }}', "non executable command in pipeline stage 2"],
    ['{{ "x" 1 }}', 'can\'t give argument to non-function "x"'],
    ['{{ "unterminated }}', "unterminated quoted string"],
    ["{{ 1x }}", 'bad number syntax: "1x"'],
    ["{{ if GetPrivateIP }}x{{ end }}", 'the "if" action is not supported'],
    ["{{ range GetAllInterfaces }}x{{ end }}", 'the "range" action is not supported'],
    ["{{ $a := GetPrivateIP }}", "template variables are not supported"],
    ["{{ .Name }}", "field access (.Name) is not supported"],
    ["{{ /* a */ }}", 'unexpected "/" in command'],
    ["{{/* unclosed }}", "unclosed comment"],
    ["{{ GetInterfaceIP }}", "at <GetInterfaceIP>: wrong number of args for GetInterfaceIP: want 1 got 0"],
    ['{{ GetAllInterfaces | limit 1 2 }}', "at <limit 1 2>: wrong number of args for limit: want 2 got 3"],
    ['{{ GetAllInterfaces | limit "1" }}', 'at <limit "1">: expected integer; found "1"'],
    ["{{ GetAllInterfaces | limit -1 }}", "at <limit -1>: expected unsigned integer; found -1"],
    ["{{ GetAllInterfaces | offset 1.5 }}", "at <offset 1.5>: expected integer; found 1.5"],
    ["{{ GetInterfaceIP 1 }}", "at <GetInterfaceIP 1>: expected string; found 1"],
    ["{{ GetPrivateIP | limit 1 }}", "at <limit 1>: wrong type for value; expected sockaddr.IfAddrs; got string"],
    ['{{ GetPrivateIP | attr "address" }}', "error calling attr: unable to obtain attribute address from type string (10.0.2.15)"],
    ['{{ GetAllInterfaces | include "flags" "pointtopoint" }}', 'at <include "flags" "pointtopoint">: error calling include: unknown interface flag: "pointtopoint"'],
    ['{{ GetAllInterfaces | include "rfc" "9999" }}', 'error calling include: unable to lookup RFC number "9999": unsupported RFC 9999'],
    ['{{ GetAllInterfaces | include "rfc" "x" }}', 'unable to lookup RFC number "x"'],
    ['{{ GetAllInterfaces | include "type" "ipv5" }}', 'error calling include: unsupported type "ipv5" "ipv5"'],
    ['{{ GetAllInterfaces | include "bogus" "x" }}', 'error calling include: invalid include selector "bogus"'],
    ['{{ GetAllInterfaces | exclude "bogus" "x" }}', 'error calling exclude: invalid exclude selector "bogus"'],
    ['{{ GetAllInterfaces | include "network" "10.0.0.0/33" }}', 'unable to create an IP address from "10.0.0.0/33"'],
    ['{{ GetAllInterfaces | include "size" "200" }}', "mask size out of bounds for IPv4 address: 200"],
    ['{{ GetInterfaceIP "(" }}', 'error calling GetInterfaceIP: unable to compile name regexp "("'],
    ['{{ GetAllInterfaces | sort "default,bogus" }}', 'error calling sort: unknown sort type: "bogus"'],
    ['{{ GetAllInterfaces | unique "flags" }}', 'error calling unique: unsupported unique constraint "flags"'],
    ['{{ GetAllInterfaces | attr "nope" }}', 'error calling attr: unsupported attribute name "nope"'],
    ['{{ GetAllInterfaces | include "name" "wg0" | attr "broadcast" }}', 'unsupported attribute name "broadcast"'],
    ["{{ GetAllInterfaces | offset 10 }}", "unable to seek past the end of the interface array: offset (10) exceeds the number of interfaces (9)"],
    ['{{ GetAllInterfaces | math "address" "1" }}', 'sign (+/-) is required for operation "address"'],
    ['{{ GetAllInterfaces | math "network" "+x" }}', 'unable to convert "+x" to int for operation "network"'],
    ['{{ GetAllInterfaces | math "mask" "33" }}', 'parameter for operation "mask" on ipv4 addresses must be between 0 and 32'],
    ['{{ GetAllInterfaces | math "bogus" "+1" }}', 'unsupported math operation: "bogus"'],
  ];
  for (const [template, message] of errors) {
    test(template, () => {
      let caught: unknown;
      try {
        run(template);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(SockaddrTemplateError);
      expect((caught as Error).message).toContain(message);
    });
  }

  test("a host address that is not an IP is an error, not a skipped entry", () => {
    const bad: SockaddrHost = { interfaces: [{ name: "x", index: 1, flags: ["up"], addresses: ["bogus"] }] };
    expect(() => run("{{ GetPrivateIP }}", bad)).toThrow('unable to create an IP address from "bogus"');
    expect(run("plain text", bad)).toBe("plain text");
  });
});

test("emptyTemplateHint says why the helpers found nothing", () => {
  expect(emptyTemplateHint('{{ GetInterfaceIP "lo" }}')).toContain("GetInterfaceIP skips addresses that are not forwardable");
  expect(emptyTemplateHint("{{ GetPrivateIP }}")).toContain("no forwardable RFC 6890 private address");
  expect(emptyTemplateHint("{{ GetPublicInterfaces | attr \"address\" }}")).toContain("outside RFC 6890");
  expect(emptyTemplateHint('{{ GetAllInterfaces | include "name" "x" | attr "address" }}')).toBe("");
});
