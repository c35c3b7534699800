/**
 * Golden files for the sidecar resources: one JSON file per scenario under testdata/, holding the four
 * resource lists as Envoy would receive them (Any-wrapped, proto3 JSON). `UPDATE_GOLDEN=1 bun test
 * src/xds/resources` rewrites them; review the diff. Every resource is also decoded back strictly against
 * Envoy's protos and checked against its protoc-gen-validate rules, and generation is deterministic.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toBinary, toJson, type DescMessage, type Message } from "@bufbuild/protobuf";
import { anyPack, AnySchema } from "@bufbuild/protobuf/wkt";
import { ClusterSchema } from "../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../../gen/envoy/config/route/v3/route_pb.ts";
import { envoyRegistry, sidecarResources } from "./index.ts";
import { SCENARIOS } from "./scenarios.test.ts";
import { strictCheckAny } from "./strict_kit.test.ts";

const dir = join(import.meta.dir, "testdata");
const update = process.env.UPDATE_GOLDEN === "1";

function render(name: string) {
  const res = sidecarResources(SCENARIOS[name]!());
  const wrap = (schema: DescMessage, items: readonly Message[]) =>
    items.map((m) => {
      const any = anyPack(schema, m as never);
      return { any, json: toJson(AnySchema, any, { registry: envoyRegistry }) };
    });
  return {
    listeners: wrap(ListenerSchema, res.listeners),
    clusters: wrap(ClusterSchema, res.clusters),
    endpoints: wrap(ClusterLoadAssignmentSchema, res.endpoints),
    routes: wrap(RouteConfigurationSchema, res.routes),
  };
}

describe("sidecar resource goldens", () => {
  for (const name of Object.keys(SCENARIOS).sort()) {
    test(name, () => {
      const r = render(name);
      const doc = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.map((x) => x.json)]));
      const text = `${JSON.stringify(doc, null, 2)}\n`;
      const file = join(dir, `${name}.golden.json`);
      if (update) writeFileSync(file, text);
      expect(existsSync(file)).toBe(true);
      expect(text).toBe(readFileSync(file, "utf8"));

      const violations: string[] = [];
      for (const [kind, list] of Object.entries(r)) {
        for (const { any } of list) violations.push(...strictCheckAny(any.typeUrl, any.value, `${kind}`));
      }
      expect(violations).toEqual([]);

      // Deterministic: a second build of an equal snapshot gives the same bytes.
      const again = render(name);
      for (const kind of Object.keys(r) as (keyof typeof r)[]) {
        expect(again[kind].map((x) => Buffer.from(toBinary(AnySchema, x.any)).toString("hex"))).toEqual(
          r[kind].map((x) => Buffer.from(toBinary(AnySchema, x.any)).toString("hex")),
        );
      }
    });
  }

  test("no stale golden files", () => {
    const files = readdirSync(dir).filter((f) => f.endsWith(".golden.json")).map((f) => f.replace(/\.golden\.json$/, ""));
    expect(files.sort()).toEqual(Object.keys(SCENARIOS).sort());
  });
});
