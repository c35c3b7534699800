/**
 * The intentions pages' routes against a fake /v1 API with two datacenters: the list in the API's
 * order with its filters, the editor's pickers (both datacenters' services and "*"), create / edit /
 * delete and what each sends, bad input (400 naming the field, nothing written), API refusals in words
 * with the form kept, the "changed since you opened it" conflict, live topics, and a service's
 * Intentions and Tags tabs.
 */
import { describe, expect, test } from "bun:test";
import type { Intention, ServiceNode } from "../model/index.ts";
import { systemClock } from "../platform/index.ts";
import { blockingOf, fakeApi, type FakeRoute } from "../../test/harness/ui_api.ts";
import { createUi, TOKEN_COOKIE } from "./app.tsx";
import { ixn } from "./intention_fixtures.test.ts";

const ID1 = "11111111-1111-1111-1111-111111111111";
const ID2 = "22222222-2222-2222-2222-222222222222";
const ID3 = "33333333-3333-3333-3333-333333333333";
const NEW_ID = "44444444-4444-4444-4444-444444444444";

const node = (id: string, tags: string[]) => ({ ServiceID: id, Node: `n-${id}`, ServiceName: "web", ServiceTags: tags }) as unknown as ServiceNode;

/** The UI over a fake API holding `state.intentions` (the list answers them in the order held: the API's precedence order). */
function ui(over: Record<string, FakeRoute> = {}) {
  const state = {
    intentions: [
      ixn(ID1, "web", "db", "allow", { Precedence: 9, Description: "web reads db", ModifyIndex: 7 }),
      ixn(ID2, "api", "web", "deny", { Precedence: 9, ModifyIndex: 8 }),
      ixn(ID3, "*", "db", "deny", { Precedence: 8, ModifyIndex: 9 }),
    ] as Intention[],
    index: 10,
  };
  const byId = (url: URL) => state.intentions.find((x) => x.ID === decodeURIComponent(url.pathname.split("/").pop() ?? ""));
  const forbidden = (token: string | undefined) => (token === "read-only" ? { status: 403, text: "Permission denied" } : undefined);
  const fake = fakeApi({
    "GET /v1/connect/intentions": () => ({ json: state.intentions, index: state.index }),
    "GET /v1/connect/intentions/*": (url) => {
      const x = byId(url);
      return x ? { json: x, index: state.index } : { status: 404, text: "Intention not found" };
    },
    "POST /v1/connect/intentions": (_url, call) => {
      const body = JSON.parse(call.body ?? "{}") as Intention;
      const no = forbidden(call.token);
      if (no) return no;
      const dup = state.intentions.find((x) => x.SourceName === body.SourceName && x.DestinationName === body.DestinationName);
      if (dup) return { status: 400, text: `duplicate intention found: ${dup.SourceName} => ${dup.DestinationName} (${dup.Action})` };
      state.intentions.push(ixn(NEW_ID, body.SourceName, body.DestinationName, body.Action, { Description: body.Description, ModifyIndex: ++state.index }));
      return { json: { ID: NEW_ID } };
    },
    "PUT /v1/connect/intentions/*": (url, call) => {
      const no = forbidden(call.token);
      if (no) return no;
      const body = JSON.parse(call.body ?? "{}") as Intention;
      state.intentions = state.intentions.map((x) => (x.ID === byId(url)?.ID ? { ...x, ...body, ModifyIndex: ++state.index } : x));
      return { json: { ID: byId(url)?.ID } };
    },
    "DELETE /v1/connect/intentions/*": (url, call) => {
      const no = forbidden(call.token);
      if (no) return no;
      const id = byId(url)?.ID;
      state.intentions = state.intentions.filter((x) => x.ID !== id);
      state.index++;
      return { json: true };
    },
    "GET /v1/catalog/services": (url) => {
      const dc = url.searchParams.get("dc") ?? "dc1";
      return { json: dc === "dc1" ? { consul: [], web: ["v1"], api: [] } : { billing: [], web: [] }, index: 3 };
    },
    "GET /v1/catalog/service/*": (url) => ({ json: url.pathname.endsWith("/web") ? [node("web-1", ["v1", "primary"]), node("web-2", ["v1"])] : [], index: 4 }),
    ...over,
  });
  const app = createUi({ datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1", "dc2"], api: fake.api, clock: systemClock() });
  const writes = () => fake.calls.filter((c) => c.method !== "GET");
  return { app, state, calls: fake.calls, writes };
}

const rowIds = (html: string) => [...html.matchAll(/<tr data-intention="([^"]+)">/g)].map((m) => m[1]);
const post = (app: ReturnType<typeof ui>["app"], path: string, fields: Record<string, string>, cookie?: string) =>
  app.request(path, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", ...(cookie ? { Cookie: cookie } : {}) }, body: new URLSearchParams(fields).toString() });

describe("the intentions list", () => {
  test("rows in the API's order with source, destination, action in words, precedence and description; counts; one h1; caption and scopes", async () => {
    const { app } = ui();
    const res = await app.request("/ui/dc1/intentions");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(rowIds(html)).toEqual([ID1, ID2, ID3]);
    expect(html).toContain("<title>Intentions – dc1 – Causeway</title>");
    expect(html.match(/<h1>/g)).toHaveLength(1);
    expect(html).toContain("3 intentions: 1 allow, 2 deny");
    expect(html).toContain("<caption>Intentions in dc1, highest precedence first: 3 matching</caption>");
    expect(html).toContain('<th scope="col">Precedence</th>');
    expect(html).toContain(`<tr data-intention="${ID1}"><th scope="row">web</th><td>db</td><td class="ixn-allow"><span aria-hidden="true">✓ </span>allow</td><td>9</td><td>web reads db</td>`);
    expect(html).toContain('<th scope="row">* (any service)</th>');
    expect(html).toContain(`<a href="/ui/dc1/intentions/${ID1}">Edit<span class="ixn-vh"> intention web → db</span></a>`);
    expect(html).toContain('<a href="/ui/dc1/intentions/create">Create an intention</a>');
    expect(html).toContain('data-live-url="/ui/events?topic=intentions&amp;dc=dc1"');
  });

  test("filters by text and action as a GET form; no match says so", async () => {
    const { app } = ui();
    const html = await (await app.request("/ui/dc1/intentions?s=DB&action=deny")).text();
    expect(rowIds(html)).toEqual([ID3]);
    expect(html).toContain('<input type="search" name="s" value="DB" data-filter="true" aria-keyshortcuts="/"');
    expect(html).toContain('<option value="deny" selected="">deny</option>');
    expect(html).toContain('data-live-url="/ui/events?topic=intentions&amp;dc=dc1&amp;s=DB&amp;action=deny"');
    expect(await (await app.request("/ui/dc1/intentions?s=nothing")).text()).toContain("No intentions match.");
  });

  test("an unknown datacenter is a 404 page in words", async () => {
    const { app } = ui({ "GET /v1/connect/intentions": () => ({ status: 500, text: "No path to datacenter" }) });
    const res = await app.request("/ui/dc9/intentions");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("There is no datacenter called dc9.");
  });
});

describe("the intention editor", () => {
  test("create: the pickers list the services of both datacenters (one optgroup each) and * for any", async () => {
    const { app, calls } = ui();
    const html = await (await app.request("/ui/dc1/intentions/create?destination=billing")).text();
    expect(html).toContain("<title>Create an intention – dc1 – Causeway</title>");
    expect(calls.map((c) => c.path)).toEqual(expect.arrayContaining(["/v1/catalog/services", "/v1/catalog/services?dc=dc2"]));
    const source = html.slice(html.indexOf('<select name="source"'), html.indexOf("</select>", html.indexOf('<select name="source"')));
    expect([...source.matchAll(/<optgroup label="([^"]+)"/g)].map((m) => m[1])).toEqual(["Any datacenter", "dc1", "dc2"]);
    expect(source).toContain('<option value="*">* (any service)</option>');
    expect(source).toMatch(/<optgroup label="dc1" data-dc="dc1"><option value="api">api<\/option><option value="consul">consul<\/option><option value="web">web<\/option><\/optgroup>/);
    expect(source).toMatch(/<optgroup label="dc2" data-dc="dc2"><option value="billing">billing<\/option><option value="web">web<\/option><\/optgroup>/);
    // ?destination= prefills the destination picker (a service listed only in dc2).
    expect(html).toContain('<option value="billing" selected="">billing</option>');
    expect(html).toContain('<form method="post" action="/ui/dc1/intentions/create" class="ixn-edit">');
    expect(html).toMatch(/<label>Or a name no datacenter lists yet<input type="text" name="sourceOther"/);
  });

  test("create posts to the API as the reader's token and redirects (303) to the list, which names the new intention", async () => {
    const { app, writes } = ui();
    const res = await post(app, "/ui/dc1/intentions/create", { source: "web", destination: "", destinationOther: "billing", action: "deny", description: "no" }, `${TOKEN_COOKIE}=t-1`);
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe(`/ui/dc1/intentions?created=${NEW_ID}`);
    expect(writes()).toEqual([{ method: "POST", path: "/v1/connect/intentions", token: "t-1", body: JSON.stringify({ SourceName: "web", DestinationName: "billing", Action: "deny", Description: "no" }) }]);
    const list = await (await app.request(res.headers.get("Location")!)).text();
    expect(list).toContain('<p role="status" id="ixn-done">Created the intention web → billing (deny).</p>');
    expect(rowIds(list)).toContain(NEW_ID);
  });

  test("create in another datacenter writes there", async () => {
    const { app, writes } = ui();
    await post(app, "/ui/dc2/intentions/create", { source: "web", destination: "billing", action: "allow" });
    expect(writes()[0]!.path).toBe("/v1/connect/intentions?dc=dc2");
  });

  test("bad input: 400 naming the field, the form kept as typed, nothing written", async () => {
    const { app, writes } = ui();
    const res = await post(app, "/ui/dc1/intentions/create", { source: "", destination: "db", action: "allow", description: "kept <b>" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('<p role="alert" class="ixn-error" id="ixn-error">Source: choose a service, or type a name.</p>');
    expect(html).toContain('<select name="source" id="ixn-source" aria-invalid="true" aria-describedby="ixn-error">');
    expect(html).toContain("kept &lt;b&gt;</textarea>");
    expect(html).toContain('<option value="web">web</option>'); // the pickers are still there
    const bad = await post(app, "/ui/dc1/intentions/create", { source: "web", destination: "db", action: "maybe" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("Action: choose allow or deny");
    expect(writes()).toEqual([]);
  });

  test("API refusals are shown in words with the form kept: a duplicate (400), a token without write rights (403)", async () => {
    const { app } = ui();
    const dup = await post(app, "/ui/dc1/intentions/create", { source: "web", destination: "db", action: "deny", description: "again" });
    expect(dup.status).toBe(400);
    const html = await dup.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain("The agent refused: duplicate intention found: web =&gt; db (allow).");
    expect(html).toContain('<option value="web" selected="">web</option>');
    expect(html).toContain("again</textarea>");
    const denied = await post(app, "/ui/dc1/intentions/create", { source: "web", destination: "billing", action: "deny" }, `${TOKEN_COOKIE}=read-only`);
    expect(denied.status).toBe(403);
    expect(await denied.text()).toContain("Your token may not do this (Permission denied).");
  });

  test("edit: the form shows the stored intention; saving PUTs it (keeping what the form does not show) and redirects", async () => {
    const { app, writes, state } = ui();
    const html = await (await app.request(`/ui/dc1/intentions/${ID1}`)).text();
    expect(html).toContain("<title>Edit intention web → db – dc1 – Causeway</title>");
    expect(html).toContain('<input type="radio" name="action" value="allow" checked=""');
    expect(html).toContain('<input type="hidden" name="modifyIndex" value="7"/>');
    expect(html).toContain(`data-live-url="/ui/events?topic=intention-changed&amp;dc=dc1&amp;id=${ID1}&amp;opened=7"`);
    expect(html).toContain(`<a href="/ui/dc1/intentions/${ID1}/delete" data-ixn-dialog="ixn-delete">Delete this intention</a>`);
    expect(html).toContain('<dialog id="ixn-delete" class="ixn-dialog" aria-labelledby="ixn-delete-title">');
    const res = await post(app, `/ui/dc1/intentions/${ID1}`, { source: "web", destination: "db", action: "deny", description: "closed", modifyIndex: "7" });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe(`/ui/dc1/intentions?updated=${ID1}`);
    expect(writes()[0]).toMatchObject({ method: "PUT", path: `/v1/connect/intentions/${ID1}` });
    expect(JSON.parse(writes()[0]!.body!)).toMatchObject({ SourceNS: "default", SourceName: "web", DestinationName: "db", Action: "deny", Description: "closed", Meta: {} });
    expect(state.intentions.find((x) => x.ID === ID1)!.Action).toBe("deny");
    expect(await (await app.request(res.headers.get("Location")!)).text()).toContain("Saved the intention web → db (deny).");
  });

  test("edit after someone else changed it: 409, nothing written, the form kept and based on the new version", async () => {
    const { app, writes } = ui();
    const res = await post(app, `/ui/dc1/intentions/${ID1}`, { source: "web", destination: "db", action: "deny", modifyIndex: "5" });
    expect(res.status).toBe(409);
    const html = await res.text();
    expect(html).toContain("Not saved: this intention changed since you opened it (index 5→7); it is now web → db, allow. Save again to replace it with this form.");
    expect(html).toContain('<input type="hidden" name="modifyIndex" value="7"/>');
    expect(html).toContain('<input type="radio" name="action" value="deny" checked=""');
    expect(writes()).toEqual([]);
  });

  test("an unknown intention is the API's 404 in words", async () => {
    const { app } = ui();
    const res = await app.request("/ui/dc1/intentions/99999999-9999-9999-9999-999999999999");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("Intention not found");
  });

  test("delete asks first (a page that works without JS), then DELETEs and redirects; a refusal keeps the question", async () => {
    const { app, writes, state } = ui();
    const ask = await (await app.request(`/ui/dc1/intentions/${ID2}/delete`)).text();
    expect(ask).toContain("<h1>Delete intention api → web?</h1>");
    expect(ask).toContain(`<form method="post" action="/ui/dc1/intentions/${ID2}/delete"><button type="submit">Delete intention</button></form>`);
    expect(ask).toContain(`<a href="/ui/dc1/intentions/${ID2}">Cancel, keep it</a>`);
    expect(writes()).toEqual([]);
    const denied = await post(app, `/ui/dc1/intentions/${ID2}/delete`, {}, `${TOKEN_COOKIE}=read-only`);
    expect(denied.status).toBe(403);
    expect(await denied.text()).toContain("Your token may not do this");
    const res = await post(app, `/ui/dc1/intentions/${ID2}/delete`, {});
    expect(res.status).toBe(303);
    expect(writes().at(-1)).toMatchObject({ method: "DELETE", path: `/v1/connect/intentions/${ID2}` });
    expect(state.intentions.map((x) => x.ID)).toEqual([ID1, ID3]);
    const list = await (await app.request(res.headers.get("Location")!)).text();
    expect(list).toContain("Deleted the intention api → web (deny).");
  });
});

/** Reads one event stream until `until` appears in it. */
async function streamUntil(app: ReturnType<typeof ui>["app"], path: string, steps: (text: () => string, until: (s: string) => Promise<void>) => Promise<void>) {
  const abort = new AbortController();
  const res = await app.request(path, { signal: abort.signal });
  expect(res.headers.get("Content-Type")).toContain("text/event-stream");
  const reader = res.body!.getReader();
  let text = "";
  const until = async (s: string) => {
    while (!text.includes(s)) text += new TextDecoder().decode((await reader.read()).value);
  };
  try {
    await steps(() => text, until);
  } finally {
    abort.abort();
    await reader.cancel().catch(() => {});
  }
}

/** A list route that blocks (past the state's index) until `bump` is called. */
function blockingList(state: { intentions: Intention[]; index: number }): { route: FakeRoute; bump: () => void } {
  let release!: () => void;
  let changed = new Promise<void>((r) => (release = r));
  return {
    route: async (url, call) => {
      const wait = blockingOf(url);
      if (wait.blocking && wait.minIndex >= state.index) await Promise.race([changed, new Promise((r) => call.signal?.addEventListener("abort", r))]);
      return { json: state.intentions, index: state.index };
    },
    bump: () => {
      state.index++;
      release();
      changed = new Promise<void>((r) => (release = r));
    },
  };
}

describe("live topics", () => {
  test("the list: a new intention's row is pushed, with the page's own filter applied", async () => {
    const holder = { intentions: [] as Intention[], index: 10 };
    const list = blockingList(holder);
    const { app, state } = ui({ "GET /v1/connect/intentions": (url, call) => list.route(url, call) });
    holder.intentions = state.intentions;
    await streamUntil(app, "/ui/events?topic=intentions&dc=dc1&action=deny&since=10", async (text, until) => {
      await until("event: open");
      holder.intentions = [...state.intentions, ixn("55555555-5555-5555-5555-555555555555", "cache", "db", "deny")];
      list.bump();
      await until("id: 11");
      const event = text().slice(text().indexOf("event: fragment"));
      expect(rowIds(event)).toEqual([ID2, ID3, "55555555-5555-5555-5555-555555555555"]);
      expect(event).toContain("4 intentions: 1 allow, 3 deny");
    });
  });

  test("the editor: a change by someone else pushes the notice (never the form); a delete says so", async () => {
    const holder = { intentions: [] as Intention[], index: 10 };
    const list = blockingList(holder);
    const { app, state } = ui({ "GET /v1/connect/intentions": (url, call) => list.route(url, call) });
    holder.intentions = state.intentions;
    await streamUntil(app, `/ui/events?topic=intention-changed&dc=dc1&id=${ID1}&opened=7&since=10`, async (text, until) => {
      await until("event: open");
      holder.intentions = holder.intentions.map((x) => (x.ID === ID1 ? { ...x, Action: "deny" as const, ModifyIndex: 11 } : x));
      list.bump();
      await until("id: 11");
      expect(text()).toContain("This intention changed since you opened it (index 7→11): it is now web → db, deny, &quot;web reads db&quot;.");
      expect(text()).not.toContain("<form");
      holder.intentions = holder.intentions.filter((x) => x.ID !== ID1);
      list.bump();
      await until("id: 12");
      expect(text()).toContain("This intention was deleted since you opened it");
    });
  });
});

describe("a service's tabs", () => {
  test("intentions: the ones naming the service as source or destination, the wildcard count, a create link with the destination prefilled, the tabs", async () => {
    const { app } = ui();
    const html = await (await app.request("/ui/dc1/services/web/intentions")).text();
    expect(rowIds(html)).toEqual([ID1, ID2]);
    expect(html).toContain("2 intentions: 1 to web, 1 from web");
    expect(html).toContain("1 intention with a wildcard (*)</a> also applies to it.");
    expect(html).toContain('<a href="/ui/dc1/intentions/create?destination=web">Create an intention to web</a>');
    expect(html).toContain('<a href="/ui/dc1/services/web/intentions" aria-current="page">Intentions</a>');
    expect(html).toContain("<title>web – dc1 – Causeway</title>");
    expect(html).toContain('data-live-url="/ui/events?topic=service-intentions&amp;dc=dc1&amp;service=web"');
    const none = await (await app.request("/ui/dc1/services/cache/intentions")).text();
    expect(none).toContain("No intention names cache.");
  });

  test("tags: each tag once with how many instances carry it, from the catalog", async () => {
    const { app, calls } = ui();
    const html = await (await app.request("/ui/dc1/services/web/tags")).text();
    expect(calls.map((c) => c.path)).toContain("/v1/catalog/service/web");
    expect([...html.matchAll(/<tr data-tag="([^"]+)"><th scope="row">[^<]+<\/th><td>([^<]+)<\/td>/g)].map((m) => [m[1], m[2]])).toEqual([["primary", "1 of 2"], ["v1", "2 of 2"]]);
    expect(html).toContain("2 tags on 2 instances");
    expect(html).toContain("<caption>Tags of web in dc1</caption>");
    expect(html).toContain('<a href="/ui/dc1/services/web/tags" aria-current="page">Tags</a>');
    expect(html).toContain('<a href="/ui/dc1/services?tag=v1">Services tagged v1</a>');
    expect(await (await app.request("/ui/dc1/services/ghost/tags")).text()).toContain("ghost has no instances in dc1.");
  });
});
