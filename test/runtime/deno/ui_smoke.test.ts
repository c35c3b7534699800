/**
 * Deno smoke suite: the web UI's server-rendered JSX (hono/jsx) and its embedded assets run on Deno.
 */
import assert from "node:assert/strict";
import { systemClock } from "../../../src/platform/index.ts";
import { createUi } from "../../../src/ui/index.ts";

Deno.test("ui: the services page renders and its stylesheet is served", async () => {
  const app = createUi({
    datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1"],
    services: async () => ({ value: [{ Name: "web", Tags: [], Nodes: ["n1"], InstanceCount: 1, ChecksPassing: 1, ChecksWarning: 0, ChecksCritical: 0, ExternalSources: [] }], index: 1 }),
    nodes: async () => ({ value: [], index: 1 }),
    instances: async () => ({ value: [], index: 1 }),
    clock: systemClock(),
  });
  const res = await app.request("/ui/dc1/services");
  assert.equal(res.status, 200);
  const html = await res.text();
  assert.match(html, /^<!DOCTYPE html>/);
  assert.match(html, /<tr data-service="web">/);
  const css = /href="(\/ui\/assets\/style-[0-9a-f]+\.css)"/.exec(html)![1]!;
  assert.equal((await app.request(css)).status, 200);
});
