import { describe, expect, test } from "bun:test";
import { systemClock } from "../platform/index.ts";
import { fakeApi } from "../../test/harness/ui_api.ts";
import { createUi, TOKEN_COOKIE } from "./app.tsx";

interface Stored { value: string | null; flags: string; create: number; modify: number }

/** An in-memory /v1/kv with Consul's answers (keys, recurse, get, PUT ?cas=&flags=, DELETE ?recurse / ?cas=), on the fake API. */
function kvUi(seed: Record<string, string | null> = {}) {
  const store = new Map<string, Stored>();
  let index = 10;
  for (const [k, v] of Object.entries(seed)) store.set(k, { value: v === null ? null : btoa(v), flags: "0", create: ++index, modify: index });
  const keyOf = (url: URL) => decodeURIComponent(url.pathname.slice("/v1/kv/".length));
  const entry = (k: string, e: Stored) => `{"LockIndex":0,"Key":${JSON.stringify(k)},"Flags":${e.flags},"Value":${e.value === null ? "null" : JSON.stringify(e.value)},"CreateIndex":${e.create},"ModifyIndex":${e.modify}}`;
  const sorted = (prefix: string) => [...store.keys()].filter((k) => k.startsWith(prefix)).sort();
  const fake = fakeApi({
    "GET /v1/kv/*": (url) => {
      const key = keyOf(url);
      if (url.searchParams.has("keys")) {
        const out: string[] = [];
        for (const k of sorted(key)) {
          const at = k.indexOf("/", key.length);
          const cut = at < 0 ? k : k.slice(0, at + 1);
          if (out.at(-1) !== cut) out.push(cut);
        }
        return out.length === 0 && key !== "" ? { status: 404, text: "", index } : { json: out, index };
      }
      if (url.searchParams.has("recurse")) {
        const ks = sorted(key);
        return ks.length === 0 ? { status: 404, text: "", index } : { text: `[${ks.map((k) => entry(k, store.get(k)!)).join(",")}]`, index };
      }
      const e = store.get(key);
      return e ? { text: `[${entry(key, e)}]`, index: e.modify } : { status: 404, text: "", index };
    },
    "PUT /v1/kv/*": (url, call) => {
      const key = keyOf(url);
      const cas = url.searchParams.get("cas");
      const old = store.get(key);
      if (cas !== null && (cas === "0" ? old !== undefined : old?.modify !== Number(cas))) return { json: false, index };
      index++;
      store.set(key, { value: call.body ? btoa(String.fromCharCode(...new TextEncoder().encode(call.body))) : null, flags: url.searchParams.get("flags") ?? "0", create: old?.create ?? index, modify: index });
      return { json: true, index };
    },
    "DELETE /v1/kv/*": (url) => {
      const key = keyOf(url);
      const cas = url.searchParams.get("cas");
      if (cas !== null && store.get(key)?.modify !== Number(cas)) return { json: false, index };
      index++;
      for (const k of url.searchParams.has("recurse") ? sorted(key) : [key]) store.delete(k);
      return { json: true, index };
    },
  });
  const app = createUi({ datacenter: "dc1", contentPath: "/ui/", datacenters: () => ["dc1", "dc2"], api: fake.api, clock: systemClock() });
  const writes = () => fake.calls.filter((c) => c.method !== "GET").map((c) => `${c.method} ${c.path}${c.body !== undefined ? ` ${JSON.stringify(c.body)}` : ""}`);
  const value = (k: string) => {
    const v = store.get(k)?.value;
    return v === undefined ? undefined : v === null ? null : new TextDecoder().decode(Uint8Array.from(atob(v), (ch) => ch.charCodeAt(0)));
  };
  const post = (path: string, form: Record<string, string>) => app.request(path, { method: "POST", body: new URLSearchParams(form), headers: { "Content-Type": "application/x-www-form-urlencoded" } });
  return { app, store, writes, value, post, calls: fake.calls, modify: (k: string) => store.get(k)!.modify, bump: (k: string, v: string) => store.set(k, { ...store.get(k)!, value: btoa(v), modify: ++index }) };
}

const SEED = { "app/": null, "app/db/url": "postgres://db", "app/web/port": "8080", "app/web/cfg": '{"a":1}', "top": "x", "odd key %/ü 1": "spaces" };
const rowsOf = (html: string) => [...html.matchAll(/<tr data-kv="([^"]+)">/g)].map((m) => m[1]);

describe("the Key/Value folder pages", () => {
  test("the root lists top-level keys and folders, sub-folders first, with one h1 and a caption", async () => {
    const { app } = kvUi(SEED);
    const res = await app.request("/ui/dc1/kv/");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(rowsOf(html)).toEqual(["app/", "odd key %/", "top"]);
    expect(html).toContain("<title>Key/Value – dc1 – Causeway</title>");
    expect(html.match(/<h1>/g)).toHaveLength(1);
    expect(html).toContain("<caption>Top-level keys (dc1)</caption>");
    expect(html).toContain('<p id="live-counts">2 folders, 1 key</p>');
    expect(html).toContain('href="/ui/dc1/kv/odd%20key%20%25/"');
    expect(html).toContain('href="/ui/dc1/kv/top/edit"');
    expect(html).toContain('data-live-url="/ui/events?topic=kv-list&amp;dc=dc1&amp;folder="');
    expect(html).not.toContain("and everything in it");
  });

  test("/kv and a folder without its slash redirect to the folder", async () => {
    const { app } = kvUi(SEED);
    expect((await app.request("/ui/dc1/kv")).headers.get("Location")).toBe("/ui/dc1/kv/");
    expect((await app.request("/ui/dc1/kv/app/web")).headers.get("Location")).toBe("/ui/dc1/kv/app/web/");
  });

  test("a nested folder: breadcrumbs to each enclosing folder, relative names, the folder's actions", async () => {
    const { app } = kvUi(SEED);
    const html = await (await app.request("/ui/dc1/kv/app/web/")).text();
    expect(rowsOf(html)).toEqual(["app/web/cfg", "app/web/port"]);
    expect(html).toMatch(/<nav aria-label="Breadcrumb" class="crumbs"><ol><li><a href="\/ui\/dc1\/kv\/">Key\/Value<\/a><\/li><li><a href="\/ui\/dc1\/kv\/app\/">app<\/a><\/li><li><a href="\/ui\/dc1\/kv\/app\/web\/" aria-current="page">web<\/a><\/li><\/ol><\/nav>/);
    expect(html).toContain('href="/ui/dc1/kv/app/web/create"');
    expect(html).toContain('href="/ui/dc1/kv/app/web/export"');
    expect(html).toContain('href="/ui/dc1/kv/app/web/delete"');
    expect(html).toContain("<title>app/web/ – dc1 – Causeway</title>");
  });

  test("a folder with nothing under it answers 404 but still offers create; keys with escapes list", async () => {
    const { app } = kvUi(SEED);
    const res = await app.request("/ui/dc1/kv/nothing/here/");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("There is nothing under nothing/here/ yet.");
    const odd = await (await app.request("/ui/dc1/kv/odd%20key%20%25/")).text();
    expect(rowsOf(odd)).toEqual(["odd key %/ü 1"]);
    expect(odd).toContain('href="/ui/dc1/kv/odd%20key%20%25/%C3%BC%201/edit"');
  });

  test("the list's live topic pushes the re-rendered table", async () => {
    const { app } = kvUi(SEED);
    const res = await app.request("/ui/events?topic=kv-list&dc=dc1&folder=app%2Fweb%2F&since=0");
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("event: fragment")) text += new TextDecoder().decode((await reader.read()).value);
    while (!text.includes("</div>")) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toContain('<tr data-kv="app/web/port">');
    expect(text).toContain("0 folders, 2 keys");
  });

  test("export: consul kv export JSON of every key under the folder, as an attachment", async () => {
    const { app } = kvUi(SEED);
    const res = await app.request("/ui/dc1/kv/app/export");
    expect(res.headers.get("Content-Disposition")).toBe('attachment; filename="kv-dc1-app.json"');
    expect(res.headers.get("Content-Type")).toContain("application/json");
    const rows = await res.json() as { key: string; flags: number; value: string }[];
    expect(rows).toEqual([
      { key: "app/", flags: 0, value: "" }, { key: "app/db/url", flags: 0, value: btoa("postgres://db") },
      { key: "app/web/cfg", flags: 0, value: btoa('{"a":1}') }, { key: "app/web/port", flags: 0, value: btoa("8080") },
    ]);
    expect(await (await app.request("/ui/dc1/kv/none/export")).text()).toBe("[]\n");
  });
});

describe("the Key/Value editor", () => {
  test("shows the value, the JSON toggle on for JSON, the index it was opened at, and a notice-only live topic", async () => {
    const { app, modify } = kvUi(SEED);
    const html = await (await app.request("/ui/dc1/kv/app/web/cfg/edit")).text();
    expect(html).toContain("<title>cfg – dc1 – Causeway</title>");
    expect(html).toContain('<textarea id="kv-value" name="value" rows="12" spellcheck="false">\n{&quot;a&quot;:1}</textarea>');
    expect(html).toContain('<input type="checkbox" id="kv-json" name="json" value="on" checked=""');
    expect(html).toContain(`<input type="hidden" name="cas" value="${modify("app/web/cfg")}"`);
    expect(html).toContain('<label for="kv-value">Value</label>');
    expect(html).toContain(`data-live-url="/ui/events?topic=kv-key&amp;dc=dc1&amp;key=app%2Fweb%2Fcfg&amp;opened=${modify("app/web/cfg")}"`);
    expect(html).toContain('<div id="kv-changed"></div>');
    const plain = await (await app.request("/ui/dc1/kv/top/edit")).text();
    expect(plain).not.toContain('checked=""');
  });

  test("saving sends ?cas= with the flags, keeps LF line ends, and redirects 303 to the editor", async () => {
    const { post, writes, value, modify } = kvUi(SEED);
    const cas = String(modify("top"));
    const res = await post("/ui/dc1/kv/top/edit", { value: "line1\r\nline2", cas, flags: "0", eol: "lf" });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/ui/dc1/kv/top/edit?saved=1");
    expect(writes()).toEqual([`PUT /v1/kv/top?cas=${cas}&flags=0 "line1\\nline2"`]);
    expect(value("top")).toBe("line1\nline2");
  });

  test("a concurrent change: 409, the conflict message with both indexes, the current value shown, the reader's text kept, nothing written", async () => {
    const { post, writes, value, modify, bump } = kvUi(SEED);
    const opened = modify("top");
    bump("top", "theirs");
    const res = await post("/ui/dc1/kv/top/edit", { value: "mine", cas: String(opened), flags: "0", eol: "lf" });
    expect(res.status).toBe(409);
    const html = await res.text();
    expect(html).toContain(`This key changed since you opened it (index ${opened}→${modify("top")}). Nothing was written.`);
    expect(html).toContain('<pre id="kv-current" tabindex="0">theirs</pre>');
    expect(html).toContain(">\nmine</textarea>");
    expect(html).toContain(`<input type="hidden" name="cas" value="${modify("top")}"`);
    expect(value("top")).toBe("theirs");
    expect(writes()).toHaveLength(1);
  });

  test("the JSON toggle refuses invalid JSON with 400 naming the parse error, keeping the text, writing nothing", async () => {
    const { post, writes } = kvUi(SEED);
    const res = await post("/ui/dc1/kv/app/web/cfg/edit", { value: "{broken", json: "on", cas: "1", flags: "0", eol: "lf" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toMatch(/<p id="kv-error" role="alert" class="error">value: Value is not valid JSON \([^)]+\)\. Nothing was written\.<\/p>/);
    expect(html).toContain('aria-invalid="true" aria-describedby="kv-error">\n{broken</textarea>');
    expect(writes()).toEqual([]);
  });

  test("bad hidden fields get a 400 naming the field", async () => {
    const { post, writes } = kvUi(SEED);
    const res = await post("/ui/dc1/kv/top/edit", { value: "x", cas: "soon", flags: "0" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("cas: must be the index the editor was opened at");
    expect(writes()).toEqual([]);
  });

  test("a binary value is shown as its size and is not editable; a missing key is a 404", async () => {
    const { app, store } = kvUi(SEED);
    store.set("bin", { value: btoa("\xff\xfe\x00\x01"), flags: "0", create: 1, modify: 1 });
    const html = await (await app.request("/ui/dc1/kv/bin/edit")).text();
    expect(html).toContain("This key holds a binary value, 4 bytes: it cannot be edited as text.");
    expect(html).not.toContain("<textarea");
    expect((await app.request("/ui/dc1/kv/missing/edit")).status).toBe(404);
  });

  test("the key topic pushes only a notice with both indexes", async () => {
    const { app, modify, bump } = kvUi(SEED);
    const opened = modify("top");
    bump("top", "theirs");
    const res = await app.request(`/ui/events?topic=kv-key&dc=dc1&key=top&opened=${opened}&since=${opened}`);
    const reader = res.body!.getReader();
    let text = "";
    while (!text.includes("</div>")) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toContain(`This key changed since you opened it (index ${opened}→${modify("top")}).`);
    expect(text).not.toContain("<form");
  });
});

describe("creating and deleting", () => {
  test("create a key (cas=0, JSON checked) in a folder with an escaped name, then a folder", async () => {
    const { post, writes, value } = kvUi(SEED);
    const res = await post("/ui/dc1/kv/app/create", { name: "new key ü", value: '{"ok":true}', json: "on" });
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/ui/dc1/kv/app/new%20key%20%C3%BC/edit?saved=1");
    expect(value("app/new key ü")).toBe('{"ok":true}');
    const folder = await post("/ui/dc1/kv/create", { name: "fresh/" });
    expect(folder.headers.get("Location")).toBe("/ui/dc1/kv/fresh/");
    expect(value("fresh/")).toBeNull();
    expect(writes()).toEqual(['PUT /v1/kv/app/new%20key%20%C3%BC?cas=0 "{\\"ok\\":true}"', 'PUT /v1/kv/fresh/?cas=0 ""']);
  });

  test("create refuses a bad name or invalid JSON (400), and an existing key (409), writing nothing", async () => {
    const { post, writes } = kvUi(SEED);
    const empty = await post("/ui/dc1/kv/create", { name: "", value: "v" });
    expect(empty.status).toBe(400);
    expect(await empty.text()).toContain("name: enter a key name");
    const json = await post("/ui/dc1/kv/create", { name: "j", value: "nope", json: "on" });
    expect(json.status).toBe(400);
    expect(await json.text()).toContain("value: Value is not valid JSON");
    const taken = await post("/ui/dc1/kv/create", { name: "top", value: "v" });
    expect(taken.status).toBe(409);
    expect(await taken.text()).toContain("A key named top already exists in dc1. Nothing was written.");
    expect(writes()).toEqual(['PUT /v1/kv/top?cas=0 "v"']);
  });

  test("a folder's delete confirms, listing what goes; the POST deletes recursively and returns to the parent", async () => {
    const { app, post, writes, store } = kvUi(SEED);
    const html = await (await app.request("/ui/dc1/kv/app/web/delete")).text();
    expect(html).toContain("Deleting app/web/ removes 2 keys in dc1");
    expect(html).toMatch(/<ul id="kv-doomed"><li>app\/web\/cfg<\/li><li>app\/web\/port<\/li><\/ul>/);
    expect(writes()).toEqual([]);
    const res = await post("/ui/dc1/kv/app/web/delete", {});
    expect(res.status).toBe(303);
    expect(res.headers.get("Location")).toBe("/ui/dc1/kv/app/");
    expect(writes()).toEqual(["DELETE /v1/kv/app/web/?recurse"]);
    expect([...store.keys()].filter((k) => k.startsWith("app/web/"))).toEqual([]);
    expect(store.has("app/db/url")).toBe(true);
    expect((await post("/ui/dc1/kv/delete", {})).status).toBe(400);
  });

  test("a key's delete uses ?cas=: a change since opening refuses it with 409", async () => {
    const { app, post, writes, modify, bump, store } = kvUi(SEED);
    const opened = modify("top");
    const confirm = await (await app.request(`/ui/dc1/kv/top/delete-key?cas=${opened}`)).text();
    expect(confirm).toContain(`Delete the key top (index ${opened}) from dc1?`);
    bump("top", "theirs");
    const refused = await post("/ui/dc1/kv/top/delete-key", { cas: String(opened) });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain(`This key changed since you opened it (index ${opened}→${modify("top")}). Nothing was deleted.`);
    const current = modify("top");
    const ok = await post("/ui/dc1/kv/top/delete-key", { cas: String(current) });
    expect(ok.headers.get("Location")).toBe("/ui/dc1/kv/");
    expect(store.has("top")).toBe(false);
    expect(writes()).toEqual([`DELETE /v1/kv/top?cas=${opened}`, `DELETE /v1/kv/top?cas=${current}`]);
  });

  test("reads and writes go as the reader's token, to the chosen datacenter", async () => {
    const { app, calls } = kvUi(SEED);
    await app.request("/ui/dc2/kv/app/", { headers: { Cookie: `${TOKEN_COOKIE}=tok-1` } });
    expect(calls.map((c) => [c.path, c.token])).toEqual([["/v1/kv/app/?keys&separator=/&dc=dc2", "tok-1"]]);
  });
});
