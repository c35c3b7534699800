import { describe, expect, test } from "bun:test";
import { upstreamDatacenter, upstreamIdentifier } from "./snapshot.ts";

describe("upstreamIdentifier (Consul's Upstream.Identifier)", () => {
  test("service, namespaced, datacenter-qualified and prepared-query upstreams", () => {
    expect(upstreamIdentifier({ DestinationName: "db", LocalBindPort: 1 })).toBe("db");
    expect(upstreamIdentifier({ DestinationType: "service", DestinationName: "db", DestinationNamespace: "default", LocalBindPort: 1 })).toBe("db");
    expect(upstreamIdentifier({ DestinationName: "db", DestinationNamespace: "ops", Datacenter: "dc2", LocalBindPort: 1 })).toBe("ops/db?dc=dc2");
    expect(upstreamIdentifier({ DestinationType: "prepared_query", DestinationName: "geo", DestinationNamespace: "ops", LocalBindPort: 1 })).toBe("prepared_query:geo");
    expect(upstreamDatacenter({ DestinationName: "db", LocalBindPort: 1 }, "dc1")).toBe("dc1");
    expect(upstreamDatacenter({ DestinationName: "db", Datacenter: "dc3", LocalBindPort: 1 }, "dc1")).toBe("dc3");
  });
});
