/**
 * Deno smoke suite: the web UI's server-rendered JSX (hono/jsx), its page modules and its embedded
 * assets run on Deno (the pages read a fake /v1 API).
 */
import assert from "node:assert/strict";
import { systemClock } from "../../../src/platform/index.ts";
import { createUi } from "../../../src/ui/index.ts";
import { fakeApi } from "../../harness/ui_api.ts";

const SUMMARY = { Name: "web", Tags: [], Nodes: ["n1"], InstanceCount: 1, ChecksPassing: 1, ChecksWarning: 0, ChecksCritical: 0, ExternalSources: [] };

Deno.test("ui: the services, key/value and settings pages render and the stylesheet is served", async () => {
  const fake = fakeApi({
    "GET /v1/internal/ui/services": () => ({ json: [SUMMARY], index: 1 }),
    "GET /v1/kv/": () => ({ json: ["app/", "top"], index: 2 }),
  });
  const app = createUi({ datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1"], api: fake.api, clock: systemClock() });
  const res = await app.request("/ui/dc1/services");
  assert.equal(res.status, 200);
  const html = await res.text();
  assert.match(html, /^<!DOCTYPE html>/);
  assert.match(html, /<tr data-service="web">/);
  const css = /href="(\/ui\/assets\/style-[0-9a-f]+\.css)"/.exec(html)![1]!;
  assert.equal((await app.request(css)).status, 200);
  const kv = await app.request("/ui/dc1/kv/");
  assert.equal(kv.status, 200);
  assert.match(await kv.text(), /top/);
  assert.equal((await app.request("/ui/settings")).status, 200);
});
