import { describe, expect, test } from "bun:test";
import type { ConnectProxyConfig, ProxyConfigEntry, ServiceConfigEntry } from "../../model/index.ts";
import { mergeServiceConfig, resolveServiceConfig } from "./service_config.ts";

const global = (o: Partial<ProxyConfigEntry> = {}): ProxyConfigEntry => ({
  Kind: "proxy-defaults", Name: "global", MeshGateway: {}, Expose: {}, CreateIndex: 1, ModifyIndex: 1, ...o,
});
const defaults = (name: string, o: Partial<ServiceConfigEntry> = {}): ServiceConfigEntry => ({
  Kind: "service-defaults", Name: name, Protocol: "", MeshGateway: {}, Expose: {}, CreateIndex: 1, ModifyIndex: 1, ...o,
});
const proxy: ConnectProxyConfig = {
  DestinationServiceName: "web",
  MeshGateway: {},
  Expose: {},
  Upstreams: [
    { DestinationName: "db", LocalBindPort: 1, MeshGateway: {} },
    { DestinationType: "prepared_query", DestinationName: "q", LocalBindPort: 2 },
  ],
};

describe("resolveServiceConfig (ConfigEntry.ResolveServiceConfig)", () => {
  test("proxy-defaults, overridden by the service's own defaults; upstreams take their service's protocol, else the global one", () => {
    const r = resolveServiceConfig(
      global({ Config: { protocol: "http", x: 1 }, MeshGateway: { Mode: "local" }, Expose: { Checks: true } }),
      defaults("web", { Protocol: "grpc", MeshGateway: { Mode: "remote" }, Expose: { Paths: [{ Path: "/m", LocalPathPort: 9 }] } }),
      new Map([["db", defaults("db", { Protocol: "tcp" })], ["cache", null]]),
    );
    expect(r).toEqual({
      ProxyConfig: { protocol: "grpc", x: 1 },
      MeshGateway: "remote",
      Expose: { Checks: true, Paths: [{ Path: "/m", LocalPathPort: 9 }] },
      UpstreamConfigs: { db: { protocol: "tcp" }, cache: { protocol: "http" } },
    });
    expect(resolveServiceConfig(null, null, new Map([["db", null]]))).toEqual({ ProxyConfig: undefined, MeshGateway: "", Expose: {}, UpstreamConfigs: {} });
  });
});

describe("mergeServiceConfig", () => {
  test("fills only what the registration left unset", () => {
    const registered: ConnectProxyConfig = {
      ...proxy,
      Config: { protocol: "tcp", empty: "" },
      Expose: { Paths: [{ Path: "/own", LocalPathPort: 1 }] },
      MeshGateway: { Mode: "none" },
    };
    const merged = mergeServiceConfig(registered, {
      ProxyConfig: { protocol: "http", empty: "filled", extra: true },
      MeshGateway: "local",
      Expose: { Checks: true, Paths: [{ Path: "/central", LocalPathPort: 2 }] },
      UpstreamConfigs: { db: { protocol: "grpc" } },
    });
    expect(merged.Config).toEqual({ protocol: "tcp", empty: "filled", extra: true });
    expect(merged.Expose).toEqual({ Checks: true, Paths: [{ Path: "/own", LocalPathPort: 1 }] });
    expect(merged.MeshGateway).toEqual({ Mode: "none" });
    // A service upstream takes the proxy's mode and its service's protocol; a prepared query neither.
    expect(merged.Upstreams).toEqual([
      { DestinationName: "db", LocalBindPort: 1, MeshGateway: { Mode: "none" }, Config: { protocol: "grpc" } },
      { DestinationType: "prepared_query", DestinationName: "q", LocalBindPort: 2 },
    ]);
  });

  test("empty defaults leave the block as registered, with no empty mode written in", () => {
    const merged = mergeServiceConfig(proxy, resolveServiceConfig(null, null, new Map([["db", null]])));
    expect(JSON.stringify(merged)).toBe(JSON.stringify(proxy));
  });
});
