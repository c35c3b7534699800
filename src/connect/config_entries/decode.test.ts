/**
 * decodeConfigEntry: Consul's JSON shape out, snake_case and case-insensitive names in, Go durations,
 * mapstructure-style errors, and normalization.
 */
import { describe, expect, test } from "bun:test";
import { ConfigEntryError, decodeConfigEntry } from "./index.ts";

function decodeError(raw: unknown): ConfigEntryError {
  try {
    decodeConfigEntry(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigEntryError);
    expect((err as ConfigEntryError).reason).toBe("decode");
    return err as ConfigEntryError;
  }
  throw new Error("expected a decode error");
}

describe("decodeConfigEntry output shape", () => {
  test("service-defaults fills non-omitempty fields with zero values", () => {
    expect(decodeConfigEntry({ Kind: "service-defaults", Name: "web" })).toEqual({
      Kind: "service-defaults", Name: "web", Protocol: "", MeshGateway: {}, Expose: {}, CreateIndex: 0, ModifyIndex: 0,
    });
  });

  test("proxy-defaults keeps Config opaque and lower-cases its protocol", () => {
    const e = decodeConfigEntry({ kind: "proxy-defaults", name: "global", config: { protocol: "HTTP", Nested: { Keep_Case: 1 } }, mesh_gateway: { mode: "remote" } });
    expect(e).toEqual({
      Kind: "proxy-defaults", Name: "global", Config: { protocol: "http", Nested: { Keep_Case: 1 } }, MeshGateway: { Mode: "remote" }, Expose: {},
      CreateIndex: 0, ModifyIndex: 0,
    });
  });

  test("indexes are echoed", () => {
    const e = decodeConfigEntry({ Kind: "service-resolver", Name: "web", CreateIndex: 5, ModifyIndex: 9 });
    expect([e.CreateIndex, e.ModifyIndex]).toEqual([5, 9]);
  });

  test("snake_case, lower-case and Go names all decode to PascalCase", () => {
    const a = decodeConfigEntry({ kind: "service-resolver", name: "web", default_subset: "v1", connect_timeout: "15s",
      subsets: { v1: { filter: "Service.Meta.v == 1", only_passing: true } }, failover: { "*": { service_subset: "v1", datacenters: ["dc2"] } } });
    const b = decodeConfigEntry({ KIND: "service-resolver", NAME: "web", DefaultSubset: "v1", connecttimeout: "15000ms",
      Subsets: { v1: { Filter: "Service.Meta.v == 1", OnlyPassing: "true" } }, Failover: { "*": { ServiceSubset: "v1", Datacenters: ["dc2"] } } });
    expect(a).toEqual(b);
    expect(a).toEqual({
      Kind: "service-resolver", Name: "web", DefaultSubset: "v1", Subsets: { v1: { Filter: "Service.Meta.v == 1", OnlyPassing: true } },
      Failover: { "*": { ServiceSubset: "v1", Datacenters: ["dc2"] } }, ConnectTimeout: "15s", CreateIndex: 0, ModifyIndex: 0,
    });
  });

  test("user map keys (subset names, meta) keep their case", () => {
    const e = decodeConfigEntry({ Kind: "service-resolver", Name: "web", Subsets: { Canary_One: {} }, Meta: { Owner_Team: "x" } });
    expect(Object.keys(e.Kind === "service-resolver" ? e.Subsets ?? {} : {})).toEqual(["Canary_One"]);
    expect(e.Meta).toEqual({ Owner_Team: "x" });
  });

  test("router: methods upper-cased, durations canonical, numbers weakly typed", () => {
    const e = decodeConfigEntry({ kind: "service-router", name: "web", routes: [
      { match: { http: { path_prefix: "/a", methods: ["get"] } }, destination: { request_timeout: "1500ms", num_retries: "2", retry_on_status_codes: [503, "504"] } },
    ] });
    expect(e).toEqual({ Kind: "service-router", Name: "web", Routes: [
      { Match: { HTTP: { PathPrefix: "/a", Methods: ["GET"] } }, Destination: { RequestTimeout: "1.5s", NumRetries: 2, RetryOnStatusCodes: [503, 504] } },
    ], CreateIndex: 0, ModifyIndex: 0 });
  });

  test("splitter weights are rounded to two decimals", () => {
    const e = decodeConfigEntry({ Kind: "service-splitter", Name: "web", Splits: [{ Weight: 33.333 }, { Weight: "66.667", Service: "b" }] });
    expect(e.Kind === "service-splitter" && e.Splits.map((s) => s.Weight)).toEqual([33.33, 66.67]);
  });

  test("durations: Go strings, nanosecond numbers, zero omitted", () => {
    const d = (v: unknown) => {
      const e = decodeConfigEntry({ Kind: "service-resolver", Name: "web", ConnectTimeout: v });
      return e.Kind === "service-resolver" ? e.ConnectTimeout : "wrong kind";
    };
    expect([d("90s"), d("1h2m"), d(5_000_000_000), d("250ms"), d("0s"), d(0), d("-3s")]).toEqual(["1m30s", "1h2m0s", "5s", "250ms", undefined, undefined, "-3s"]);
  });

  test("durations: small numbers in Go's units, fractions truncated as mapstructure does, int64 overflow refused", () => {
    const d = (v: unknown) => {
      const e = decodeConfigEntry({ Kind: "service-resolver", Name: "web", ConnectTimeout: v });
      return e.Kind === "service-resolver" ? e.ConnectTimeout : "wrong kind";
    };
    expect([d(5), d(1_000), d(1.5), d("2562047h")]).toEqual(["5ns", "1µs", "1ns", "2562047h0m0s"]);
    expect(() => d(2 ** 63)).toThrow("time: invalid duration 9223372036854776000 (out of range)");
    expect(() => d("2562048h")).toThrow(`time: invalid duration "2562048h"`);
  });

  test("accepts JSON text, and a default Namespace", () => {
    expect(decodeConfigEntry(`{"Kind":"service-defaults","Name":"web","Namespace":"default","Protocol":"http"}`)).toMatchObject({ Protocol: "http" });
  });

  test("round-trips through JSON unchanged", () => {
    const raw = { Kind: "service-router", Name: "web", Routes: [{ Match: { HTTP: { PathExact: "/x", Header: [{ Name: "a", Present: true }] } }, Destination: { Service: "b", RequestTimeout: "2s" } }], Meta: { k: "v" } };
    const once = decodeConfigEntry(raw);
    expect(decodeConfigEntry(JSON.stringify(once))).toEqual(once);
  });

  test("an empty pointer struct is kept, so validation can reject it", () => {
    expect(decodeConfigEntry({ Kind: "service-resolver", Name: "web", Redirect: {} })).toMatchObject({ Redirect: {} });
  });
});

describe("decodeConfigEntry errors", () => {
  test.each([
    ["not an object", [1, 2], "Payload does not contain a kind/Kind key at the top level"],
    ["no kind", { Name: "web" }, "Payload does not contain a kind/Kind key at the top level"],
    ["unknown kind", { Kind: "service-intentions", Name: "web" }, "invalid config entry kind: service-intentions"],
    ["bad JSON text", "{", "invalid JSON: "],
    ["other namespace", { Kind: "service-defaults", Name: "web", Namespace: "team-a" }, 'Namespace "team-a" is not supported'],
    ["unknown top-level key", { Kind: "service-defaults", Name: "web", Protocl: "http" }, "1 error(s) decoding:\n\n* '' has invalid keys: Protocl"],
    ["unknown nested key", { Kind: "service-router", Name: "web", Routes: [{ Match: { HTTP: { Path: "/" } } }] }, "* 'Routes[0].Match.HTTP' has invalid keys: Path"],
    ["wrong type", { Kind: "service-splitter", Name: "web", Splits: [{ Weight: "lots" }] }, "* 'Splits[0].Weight' expected type 'float32', got unconvertible type 'string'"],
    ["list expected", { Kind: "service-splitter", Name: "web", Splits: { Weight: 100 } }, "* 'Splits' expected type 'slice', got unconvertible type 'map[string]interface {}'"],
    ["bad duration", { Kind: "service-resolver", Name: "web", ConnectTimeout: "5 seconds" }, `* error decoding 'ConnectTimeout': time: invalid duration "5 seconds"`],
    ["negative uint", { Kind: "service-router", Name: "web", Routes: [{ Destination: { NumRetries: -1 } }] }, "* 'Routes[0].Destination.NumRetries' expected type 'uint32'"],
    ["bad bool", { Kind: "service-resolver", Name: "web", Subsets: { v1: { OnlyPassing: "yes" } } }, "* 'Subsets[v1].OnlyPassing' expected type 'bool'"],
  ])("%s", (_name, raw, message) => {
    expect(decodeError(raw).message).toContain(message);
  });

  test("all errors are reported at once", () => {
    const err = decodeError({ Kind: "service-splitter", Name: "web", Splits: [{ Weight: "x", Foo: 1 }], Bar: 2 });
    expect(err.message).toBe(
      "3 error(s) decoding:\n\n* '' has invalid keys: Bar\n* 'Splits[0]' has invalid keys: Foo\n* 'Splits[0].Weight' expected type 'float32', got unconvertible type 'string'",
    );
    expect(err.statusCode).toBe(400);
  });
});
