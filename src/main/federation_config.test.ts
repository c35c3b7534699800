import { describe, expect, test } from "bun:test";
import { buildConfig, ConfigError, defaultConfig, parseConfigJson } from "./config.ts";

const TLS = { ca_file: "/ca.pem", cert_file: "/s.pem", key_file: "/s-key.pem", verify_incoming_rpc: true, verify_outgoing: true, verify_server_hostname: true };
const WANFED = { connect: { enabled: true, enable_mesh_gateway_wan_federation: true } };
/** A secondary's server that can federate. */
const SECONDARY = { server: true, datacenter: "dc2", primary_datacenter: "dc1", primary_gateways: ["10.0.0.1:8443"], ...WANFED, ...TLS };
/** A primary's server that can federate. */
const PRIMARY = { server: true, datacenter: "dc1", primary_datacenter: "dc1", ...WANFED, ...TLS };

const build = (doc: Record<string, unknown>, node = "s1") => buildConfig({ ...defaultConfig(node), dataDir: "/d" }, [parseConfigJson("f.json", doc)]);
const without = (doc: Record<string, unknown>, ...keys: string[]) => Object.fromEntries(Object.entries(doc).filter(([k]) => !keys.includes(k)));

describe("WAN federation config checks", () => {
  test("a primary and a secondary that can federate are accepted", () => {
    expect(build(PRIMARY).federation.meshGatewayWanFederation).toBe(true);
    expect(build(SECONDARY).federation.primaryGateways).toEqual(["10.0.0.1:8443"]);
    // verify_incoming stands in for verify_incoming_rpc; hostnames and IPv6 literals are host:port too.
    const alt = { ...without(SECONDARY, "verify_incoming_rpc"), verify_incoming: true, primary_gateways: ["gw.dc1.example:443", "[2001:db8::1]:8443"] };
    expect(build(alt).federation.primaryGateways).toEqual(["gw.dc1.example:443", "[2001:db8::1]:8443"]);
  });

  test("a secondary may learn the primary's gateways from federated servers of its own datacenter instead", () => {
    expect(build({ ...without(SECONDARY, "primary_gateways"), retry_join: ["10.2.0.2"] }).federation.primaryGateways).toEqual([]);
    expect(build({ ...without(SECONDARY, "primary_gateways"), start_join: ["10.2.0.2"] }).datacenter).toBe("dc2");
  });

  const refused: [string, Record<string, unknown>, string, string?][] = [
    ["on a client agent", { ...PRIMARY, server: false }, "'connect.enable_mesh_gateway_wan_federation = true' requires 'server = true'"],
    ["a node name with a slash", PRIMARY, "'connect.enable_mesh_gateway_wan_federation = true' requires that 'node_name' not contain '/' characters", "rack/s1"],
    ["a node name with a dot (an FQDN, issue #12614)", PRIMARY, "requires that 'node_name' not contain '.' characters: the WAN pool names this server \"<node_name>.<datacenter>\", which must split in exactly two parts", "s1.example.com"],
    ["with retry_join_wan", { ...SECONDARY, retry_join_wan: ["10.0.0.9"] }, "'retry_join_wan' is incompatible with 'connect.enable_mesh_gateway_wan_federation = true'"],
    ["primary_gateways on a client", { datacenter: "dc2", primary_datacenter: "dc1", primary_gateways: ["10.0.0.1:8443"] }, "'primary_gateways' requires 'server = true'"],
    ["primary_gateways in the primary", { ...PRIMARY, primary_gateways: ["10.0.0.1:8443"] }, "'primary_gateways' should only be configured in a secondary datacenter"],
    ["primary_gateways in a datacenter with no primary_datacenter (its own primary)", { server: true, primary_gateways: ["10.0.0.1:8443"] }, "'primary_gateways' should only be configured in a secondary datacenter"],
    ["a primary gateway with no port", { ...SECONDARY, primary_gateways: ["10.0.0.1"] }, 'primary_gateways entry "10.0.0.1" must be host:port'],
    ["a primary gateway with port 0", { ...SECONDARY, primary_gateways: ["10.0.0.1:0"] }, 'primary_gateways entry "10.0.0.1:0" must be host:port'],
    ["a go-discover primary gateway", { ...SECONDARY, primary_gateways: ["provider=aws tag_key=gw"] }, 'primary_gateways entry "provider=aws tag_key=gw" is a cloud auto-join (go-discover) expression'],
    ["primary_gateways_interval under 1s", { ...SECONDARY, primary_gateways_interval: "500ms" }, "primary_gateways_interval must be at least 1s, got 500ms"],
    ["a secondary with no way to learn the primary's gateways", without(SECONDARY, "primary_gateways"),
      "'connect.enable_mesh_gateway_wan_federation = true' in secondary datacenter \"dc2\" (primary_datacenter \"dc1\") requires 'primary_gateways'"],
    ["no TLS at all", without(PRIMARY, ...Object.keys(TLS)),
      "'connect.enable_mesh_gateway_wan_federation = true' requires TLS between servers; missing: ca_file, cert_file, key_file, verify_incoming_rpc (or verify_incoming), verify_outgoing, verify_server_hostname"],
    ["no incoming verification", without(PRIMARY, "verify_incoming_rpc"), "requires TLS between servers; missing: verify_incoming_rpc (or verify_incoming)"],
    ["no outgoing TLS", without(PRIMARY, "verify_outgoing"), "requires TLS between servers; missing: verify_outgoing"],
    ["no server hostname verification", without(PRIMARY, "verify_server_hostname"), "requires TLS between servers; missing: verify_server_hostname"],
  ];
  for (const [name, doc, message, node] of refused) {
    test(`refused: ${name}`, () => {
      expect(() => build(doc, node)).toThrow(ConfigError);
      expect(() => build(doc, node)).toThrow(message);
    });
  }

  test("without wanfed, a secondary needs neither gateways nor TLS (Consul ignores primary_gateways then)", () => {
    const cfg = build({ server: true, datacenter: "dc2", primary_datacenter: "dc1", retry_join_wan: ["10.0.0.9"], disable_primary_gateway_fallback: true });
    expect(cfg.federation).toEqual({ meshGatewayWanFederation: false, primaryGateways: [], primaryGatewaysIntervalMs: 30_000, disablePrimaryGatewayFallback: true });
  });
});
