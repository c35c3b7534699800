import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "../../test/harness/cli_agent.ts";
import type { SockaddrHost } from "../lib/index.ts";
import { buildAgentConfig } from "./commands/agent.ts";
import { validateCommand } from "./commands/validate.ts";
import { buildConfig, ConfigError, defaultConfig, DEV_SOURCE, parseConfigJson, type ConfigSource, type RuntimeConfig } from "./config.ts";

/** lo, a private eth0 with the default route, a public eth1, an IPv6-only wg0. */
const HOST: SockaddrHost = {
  defaultInterface: "eth0",
  interfaces: [
    { name: "lo", index: 1, flags: ["up", "loopback", "running"], addresses: ["127.0.0.1/8", "::1/128"] },
    { name: "eth0", index: 2, flags: ["up", "broadcast", "multicast", "running"], addresses: ["10.0.2.15/24", "fe80::1/64"] },
    { name: "eth1", index: 3, flags: ["up", "broadcast", "multicast", "running"], addresses: ["52.95.110.1/24"] },
    { name: "wg0", index: 4, flags: ["up", "pointtopoint", "running"], addresses: ["fd12:3456::1/64"] },
  ],
};

const build = (doc: Record<string, unknown>, ...more: ConfigSource[]): RuntimeConfig =>
  buildConfig(defaultConfig("h"), [parseConfigJson("c.json", { data_dir: "/d", ...doc }), ...more], () => HOST);
const failure = (doc: Record<string, unknown>): string => {
  try {
    build(doc);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("the config was accepted");
};

describe("go-sockaddr templates in address settings", () => {
  test("bind_addr, advertise_addr, advertise_addr_wan and client_addr resolve to one address each", () => {
    const cfg = build({
      bind_addr: "{{ GetPrivateIP }}",
      advertise_addr: '{{ GetInterfaceIP "eth0" }}',
      advertise_addr_wan: "{{ GetPublicIP }}",
      client_addr: '{{ GetAllInterfaces | include "flags" "loopback" | include "type" "ipv4" | attr "address" }}',
    });
    expect([cfg.bindAddr, cfg.advertiseAddr, cfg.gossip.advertiseAddrWan, cfg.clientAddr]).toEqual(["10.0.2.15", "10.0.2.15", "52.95.110.1", "127.0.0.1"]);
  });

  test("flags go through the same evaluation, after files; -dev's loopback bind can be replaced by a template", () => {
    const cfg = buildConfig(defaultConfig("h"), [DEV_SOURCE, { bindAddr: '{{ GetInterfaceIP "wg0" }}', clientAddr: "[::]" }], () => HOST);
    expect([cfg.bindAddr, cfg.clientAddr]).toEqual(["fd12:3456::1", "::"]);
  });

  test("join lists: a template entry becomes the addresses it gives, other entries stay as written", () => {
    const cfg = build({
      server: true,
      primary_datacenter: "dc0",
      start_join: ["{{ GetPrivateIPs }}"],
      retry_join: ["provider=aws tag_key=consul tag_value=server", '{{ GetInterfaceIP "eth1" }}:8301'],
      retry_join_wan: ['{{ GetAllInterfaces | include "name" "eth" | exclude "type" "ipv6" | join "address" " " }}'],
      primary_gateways: ['{{ GetInterfaceIP "eth1" }}:8443'],
      recursors: ["{{ GetPublicIP }}", "52.95.110.1", "8.8.8.8"],
    });
    expect(cfg.gossip.startJoin).toEqual(["10.0.2.15", "fd12:3456::1"]);
    expect(cfg.gossip.retryJoin).toEqual(["provider=aws tag_key=consul tag_value=server", "52.95.110.1:8301"]);
    expect(cfg.gossip.retryJoinWan).toEqual(["10.0.2.15", "52.95.110.1"]);
    expect(cfg.federation.primaryGateways).toEqual(["52.95.110.1:8443"]);
    // De-duplicated as Consul's builder does.
    expect(cfg.dns.recursors).toEqual(["52.95.110.1", "8.8.8.8"]);
  });

  test("the host is read once, and only when a value holds a template", () => {
    let reads = 0;
    const readHost = () => (reads++, HOST);
    buildConfig(defaultConfig("h"), [{ dataDir: "/d", bindAddr: "10.0.0.1", gossip: { retryJoin: ["a.example"] } }], readHost);
    expect(reads).toBe(0);
    buildConfig(defaultConfig("h"), [{ dataDir: "/d", bindAddr: "{{ GetPrivateIP }}", clientAddr: "{{ GetPrivateIP }}" }], readHost);
    expect(reads).toBe(1);
  });

  const cases: readonly [string, Record<string, unknown>, string][] = [
    ["a template that gives nothing", { bind_addr: '{{ GetInterfaceIP "lo" }}' },
      'bind_addr: "{{ GetInterfaceIP \\"lo\\" }}" gave no address (GetInterfaceIP skips addresses that are not forwardable'],
    ["a string piped where a list is expected", { advertise_addr_wan: "{{ GetPublicIPs | exclude \"name\" \"eth1\" }}" }, 'advertise_addr_wan: error parsing "{{ GetPublicIPs | exclude'],
    ["an empty advertise template", { advertise_addr: '{{ GetAllInterfaces | include "name" "nope" | attr "address" }}' }, 'advertise_addr: "{{ GetAllInterfaces | include \\"name\\" \\"nope\\" | attr \\"address\\" }}" gave no address'],
    ["several bind addresses", { bind_addr: "{{ GetPrivateIPs }}" },
      'bind_addr: "{{ GetPrivateIPs }}" gave 2 addresses (10.0.2.15 fd12:3456::1); bind_addr cannot contain multiple addresses; it takes one'],
    ["several advertise addresses", { advertise_addr: '{{ GetInterfaceIPs "eth0" }}' }, 'advertise_addr: "{{ GetInterfaceIPs \\"eth0\\" }}" gave 2 addresses (10.0.2.15 fe80::1)'],
    ["several client addresses", { client_addr: "127.0.0.1 {{ GetPrivateIP }}" },
      "client_addr: \"127.0.0.1 {{ GetPrivateIP }}\" gave 2 addresses (127.0.0.1 10.0.2.15); Causeway's HTTP, gRPC and DNS listeners take one client address"],
    ["an unknown function", { bind_addr: "{{ GetPrivateAddress }}" }, 'bind_addr: error parsing "{{ GetPrivateAddress }}": function "GetPrivateAddress" not defined'],
    ["a syntax error", { client_addr: "{{ GetPrivateIP" }, 'client_addr: error parsing "{{ GetPrivateIP": unclosed action'],
    ["a bad argument", { retry_join: ['{{ GetAllInterfaces | include "flags" "upp" | attr "address" }}'] }, 'retry_join: error parsing "{{ GetAllInterfaces | include \\"flags\\" \\"upp\\" | attr \\"address\\" }}": at <include "flags" "upp">: error calling include: unknown interface flag: "upp"'],
    ["a type error in a join entry", { retry_join_wan: ["{{ GetPublicIPs | limit 0 }}"] }, "retry_join_wan: error parsing"],
    ["an empty join template", { start_join: ['{{ GetInterfaceIPs "nope" }}'] }, 'start_join: "{{ GetInterfaceIPs \\"nope\\" }}" gave no address'],
    ["an empty recursor template", { recursors: ['{{ GetInterfaceIP "lo" }}'] }, 'recursors: "{{ GetInterfaceIP \\"lo\\" }}" gave no address'],
    ["a result that is not an IP", { bind_addr: '{{ GetAllInterfaces | attr "name" }}' }, 'bind_addr: invalid ip address: lo (from "{{ GetAllInterfaces | attr \\"name\\" }}")'],
    ["a bind address that is not an IP", { bind_addr: "localhost" }, "bind_addr: invalid ip address: localhost"],
    ["an empty bind address", { bind_addr: "" }, "bind_addr cannot be empty"],
    ["a unix socket", { client_addr: "unix:///tmp/c.sock" }, "client_addr cannot be a unix socket"],
    ["an ANY advertise address", { advertise_addr: "0.0.0.0" }, "advertise_addr cannot be 0.0.0.0, :: or [::]"],
    ["an ANY WAN advertise address", { advertise_addr_wan: "[::]" }, "advertise_addr_wan cannot be 0.0.0.0, :: or [::]"],
    ["a unix socket recursor", { recursors: ["unix:///run/dns.sock"] }, "DNS Recursors cannot be unix sockets: unix:///run/dns.sock"],
  ];
  for (const [what, doc, message] of cases) test(`${what} is a ConfigError naming the setting`, () => expect(failure(doc)).toContain(message));

  test("GetDefaultInterfaces on a host without a default route names the setting", () => {
    const noRoute = () => ({ interfaces: HOST.interfaces });
    expect(() => buildConfig(defaultConfig("h"), [{ dataDir: "/d", bindAddr: '{{ GetDefaultInterfaces | attr "address" }}' }], noRoute))
      .toThrow('bind_addr: error parsing "{{ GetDefaultInterfaces | attr \\"address\\" }}": at <GetDefaultInterfaces>: error calling GetDefaultInterfaces: no default interface found');
  });

  test("a host that cannot be read, or none given, is an error naming the setting", () => {
    const denied = () => {
      throw new Error("Requires sys access to \"networkInterfaces\"");
    };
    expect(() => buildConfig(defaultConfig("h"), [{ dataDir: "/d", bindAddr: "{{ GetPrivateIP }}" }], denied))
      .toThrow('bind_addr: cannot evaluate "{{ GetPrivateIP }}": reading the host\'s network interfaces failed: Requires sys access');
    expect(() => buildConfig(defaultConfig("h"), [{ dataDir: "/d", bindAddr: "{{ GetPrivateIP }}" }]))
      .toThrow("bind_addr: \"{{ GetPrivateIP }}\" is a go-sockaddr template and no view of the host's interfaces was given");
  });

  test("buildAgentConfig takes the host view too", () => {
    expect(buildAgentConfig([{ dataDir: "/d", bindAddr: "{{ GetPublicIP }}" }], () => HOST).bindAddr).toBe("52.95.110.1");
  });
});

describe("causeway validate evaluates the templates over this host", () => {
  const work = mkdtempSync(join(tmpdir(), "causeway-sockaddr-validate-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));
  const write = (name: string, doc: unknown) => {
    const path = join(work, name);
    writeFileSync(path, JSON.stringify(doc));
    return path;
  };

  test("a template every host can answer is valid", async () => {
    const path = write("ok.json", { data_dir: "/d", bind_addr: '{{ GetAllInterfaces | include "flags" "loopback" | include "type" "ipv4" | attr "address" }}' });
    expect(await runCommand(validateCommand, [path])).toEqual({ code: 0, out: "Configuration is valid!\n", err: "" });
  });

  test("a template that gives nothing, or does not parse, fails naming the setting", async () => {
    const empty = await runCommand(validateCommand, [write("lo.json", { data_dir: "/d", bind_addr: '{{ GetInterfaceIP "^lo$" }}' })]);
    expect(empty.code).toBe(1);
    expect(empty.err).toStartWith('Config validation failed: bind_addr: "{{ GetInterfaceIP \\"^lo$\\" }}" gave no address (GetInterfaceIP skips');
    const unknown = await runCommand(validateCommand, [write("bad.json", { data_dir: "/d", advertise_addr: "{{ GetPrivateIPv4 }}" })]);
    expect(unknown).toEqual({ code: 1, out: "", err: 'Config validation failed: advertise_addr: error parsing "{{ GetPrivateIPv4 }}": function "GetPrivateIPv4" not defined\n' });
  });
});
