/** @jsxImportSource hono/jsx */
/**
 * The Key/Value pages (Consul's /ui/:dc/kv/...; URL scheme in kv_paths.ts): folder listings with
 * breadcrumbs (live), the editor (saves with ?cas= the ModifyIndex it was opened at: a refused save
 * shows the key as it is now and keeps the reader's text), the create form (a name ending in "/" makes
 * a folder), delete confirmations (a folder recursively; a key with ?cas=), and a folder's export as
 * `consul kv export` JSON. Reads and writes go through the agent's own /v1/kv as the reader's token.
 * Every form works without script; a successful POST answers 303.
 */
import type { Context } from "hono";
import { Layout } from "./layout.tsx";
import type { UiContext, UiPageModule } from "./page.ts";
import { kvApiPath, readFolder, readKey, readTree } from "./kv_api.ts";
import { KvDeleteFolderPage, KvDeleteKeyPage } from "./kv_delete.tsx";
import { changeNotice, editorOpenedAt, entryText, KvChanged, KvCreatePage, KvEditPage, type EditorState } from "./kv_editor.tsx";
import { KvListLive, KvListPage } from "./kv_list.tsx";
import { exportFileName, exportJson, jsonProblem, kvHref, looksLikeJson, nameProblem, parentFolder, parseKvPath, reachableKvPath, submittedText, type KvEntry, type KvRoute } from "./kv_paths.ts";

/** The raw (percent-encoded) path after "<base><dc>/kv", or undefined when the request is not under it. */
export function kvRest(pathname: string, base: string): string | undefined {
  const after = pathname.slice(base.length);
  const slash = after.indexOf("/");
  if (slash < 0 || !after.slice(slash).startsWith("/kv")) return undefined;
  return after.slice(slash + 3);
}

const listLive = (ctx: UiContext, dc: string, folder: string) => `${ctx.base}events?topic=kv-list&dc=${encodeURIComponent(dc)}&folder=${encodeURIComponent(folder)}`;
const keyLive = (ctx: UiContext, dc: string, key: string, opened: number) =>
  `${ctx.base}events?topic=kv-key&dc=${encodeURIComponent(dc)}&key=${encodeURIComponent(key)}&opened=${opened}`;

/** A page that only says what went wrong (bad input 400, nothing there 404, a refused write 409). */
async function message(ctx: UiContext, c: Context, dc: string, status: number, title: string, text: string) {
  return ctx.html(c, (
    <Layout {...await ctx.frame(c, dc)} section="kv" title={title}>
      <p role="alert" id="kv-error" class="error">{text}</p>
      <p><a href={kvHref(ctx.base, dc, { kind: "folder", folder: "" })}>Back to Key/Value</a></p>
    </Layout>
  ), status);
}

/** The editor's state for `entry` as stored. */
function freshState(entry: KvEntry, saved: boolean): EditorState {
  const text = entryText(entry) ?? "";
  return { text, json: looksLikeJson(text), cas: entry.ModifyIndex, flags: entry.Flags, eol: text.includes("\r\n") ? "crlf" : "lf", saved };
}

const digits = (v: string, fallback?: string) => /^\d+$/.test(v) ? v : v === "" && fallback !== undefined ? fallback : undefined;

async function getPage(ctx: UiContext, c: Context, dc: string, route: KvRoute): Promise<Response> {
  const token = ctx.token(c);
  const frame = await ctx.frame(c, dc);
  switch (route.kind) {
    case "bare":
      return c.redirect(kvHref(ctx.base, dc, route), 302);
    case "folder": {
      const r = await readFolder(ctx, dc, token, route.folder);
      const page = <KvListPage frame={frame} folder={route.folder} items={r.value.items} exists={r.value.exists} index={r.index} liveUrl={listLive(ctx, dc, route.folder)} />;
      return ctx.html(c, page, r.value.exists || route.folder === "" ? 200 : 404);
    }
    case "edit": {
      const r = await readKey(ctx, dc, token, route.key);
      if (!r.value) return message(ctx, c, dc, 404, "No such key", `There is no key ${route.key} in ${dc}.`);
      return ctx.html(c, <KvEditPage frame={frame} keyName={route.key} entry={r.value} state={freshState(r.value, c.req.query("saved") === "1")} liveUrl={keyLive(ctx, dc, route.key, r.value.ModifyIndex)} />);
    }
    case "create":
      return ctx.html(c, <KvCreatePage frame={frame} folder={route.folder} name="" text="" json={false} />);
    case "delete": {
      if (route.folder === "") return message(ctx, c, dc, 400, "Not offered", "folder: deleting every key at once is not offered here; delete one folder at a time.");
      return ctx.html(c, <KvDeleteFolderPage frame={frame} folder={route.folder} entries={await readTree(ctx, dc, token, route.folder)} />);
    }
    case "delete-key": {
      const r = await readKey(ctx, dc, token, route.key);
      const cas = Number(digits(c.req.query("cas") ?? "") ?? r.value?.ModifyIndex ?? 0);
      const changed = r.value && r.value.ModifyIndex !== cas ? changeNotice(cas, r.value, r.index) : undefined;
      return ctx.html(c, <KvDeleteKeyPage frame={frame} keyName={route.key} entry={r.value} cas={cas} message={changed} />, r.value ? 200 : 404);
    }
    case "export": {
      const body = exportJson(await readTree(ctx, dc, token, route.folder));
      return c.body(body, 200, { "Content-Type": "application/json; charset=utf-8", "Content-Disposition": `attachment; filename="${exportFileName(dc, route.folder)}"` });
    }
  }
}

async function saveKey(ctx: UiContext, c: Context, dc: string, key: string, form: Record<string, string>): Promise<Response> {
  const token = ctx.token(c);
  const cas = digits(form["cas"] ?? "");
  const flags = digits(form["flags"] ?? "", "0");
  if (cas === undefined) return message(ctx, c, dc, 400, "Bad request", `cas: must be the index the editor was opened at (a whole number), got ${JSON.stringify(form["cas"] ?? "")}. Nothing was written.`);
  if (flags === undefined) return message(ctx, c, dc, 400, "Bad request", `flags: must be a whole number, got ${JSON.stringify(form["flags"])}. Nothing was written.`);
  const eol = form["eol"] === "crlf" ? "crlf" : "lf";
  const text = submittedText(form["value"] ?? "", eol);
  const json = form["json"] === "on";
  const state = { text, json, cas: Number(cas), flags, eol } as const;
  const problem = json ? jsonProblem(text) : undefined;
  if (problem === undefined) {
    const r = await ctx.call({ method: "PUT", path: kvApiPath(key, `cas=${cas}&flags=${flags}`), body: text, dc, token });
    if (r.text.trim() === "true") return c.redirect(`${kvHref(ctx.base, dc, { kind: "edit", key })}?saved=1`, 303);
  }
  const now = await readKey(ctx, dc, token, key);
  const again = async (next: EditorState, status: number) => ctx.html(c, (
    <KvEditPage frame={await ctx.frame(c, dc)} keyName={key} entry={now.value} state={next} liveUrl={keyLive(ctx, dc, key, editorOpenedAt(now.value, next))} />
  ), status);
  if (problem !== undefined) return again({ ...state, error: `value: Value is not valid JSON (${problem}). Nothing was written.` }, 400);
  const conflict = { message: changeNotice(Number(cas), now.value, now.index) ?? `This key changed since you opened it (index ${cas}).` };
  return again({ ...state, cas: now.value?.ModifyIndex ?? 0, flags: now.value?.Flags ?? flags, conflict }, 409);
}

async function create(ctx: UiContext, c: Context, dc: string, folder: string, form: Record<string, string>): Promise<Response> {
  const token = ctx.token(c);
  const name = (form["name"] ?? "").trim();
  const text = submittedText(form["value"] ?? "", "lf");
  const json = form["json"] === "on";
  const again = async (status: number, error: string, existing?: string) =>
    ctx.html(c, <KvCreatePage frame={await ctx.frame(c, dc)} folder={folder} name={name} text={text} json={json} error={error} existing={existing} />, status);
  const bad = nameProblem(name);
  if (bad) return again(400, `${bad}. Nothing was written.`);
  const full = folder + name;
  if (name.endsWith("/")) {
    // An existing folder is no error: the reader lands in it either way.
    await ctx.call({ method: "PUT", path: kvApiPath(full, "cas=0"), body: "", dc, token });
    return c.redirect(kvHref(ctx.base, dc, { kind: "folder", folder: full }), 303);
  }
  const problem = json ? jsonProblem(text) : undefined;
  if (problem !== undefined) return again(400, `value: Value is not valid JSON (${problem}). Nothing was written.`);
  const r = await ctx.call({ method: "PUT", path: kvApiPath(full, "cas=0"), body: text, dc, token });
  if (r.text.trim() !== "true") return again(409, `A key named ${full} already exists in ${dc}. Nothing was written.`, kvHref(ctx.base, dc, { kind: "edit", key: full }));
  return c.redirect(`${kvHref(ctx.base, dc, { kind: "edit", key: full })}?saved=1`, 303);
}

async function deleteKey(ctx: UiContext, c: Context, dc: string, key: string, form: Record<string, string>): Promise<Response> {
  const token = ctx.token(c);
  const cas = digits(form["cas"] ?? "");
  if (cas === undefined) return message(ctx, c, dc, 400, "Bad request", `cas: must be the key's index (a whole number), got ${JSON.stringify(form["cas"] ?? "")}. Nothing was deleted.`);
  const r = await ctx.call({ method: "DELETE", path: kvApiPath(key, `cas=${cas}`), dc, token });
  if (r.text.trim() === "true") return c.redirect(kvHref(ctx.base, dc, { kind: "folder", folder: parentFolder(key) }), 303);
  const now = await readKey(ctx, dc, token, key);
  const notice = `${changeNotice(Number(cas), now.value, now.index) ?? "This key changed since you opened it."} Nothing was deleted.`;
  return ctx.html(c, <KvDeleteKeyPage frame={await ctx.frame(c, dc)} keyName={key} entry={now.value} cas={now.value?.ModifyIndex ?? 0} message={notice} />, 409);
}

async function postPage(ctx: UiContext, c: Context, dc: string, route: KvRoute): Promise<Response> {
  const raw = await c.req.parseBody().catch(() => ({} as Record<string, unknown>));
  const form = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, typeof v === "string" ? v : ""]));
  switch (route.kind) {
    case "edit": return saveKey(ctx, c, dc, route.key, form);
    case "create": return create(ctx, c, dc, route.folder, form);
    case "delete-key": return deleteKey(ctx, c, dc, route.key, form);
    case "delete": {
      if (route.folder === "") return message(ctx, c, dc, 400, "Not offered", "folder: deleting every key at once is not offered here. Nothing was deleted.");
      await ctx.call({ method: "DELETE", path: kvApiPath(route.folder, "recurse"), dc, token: ctx.token(c) });
      return c.redirect(kvHref(ctx.base, dc, { kind: "folder", folder: parentFolder(route.folder) }), 303);
    }
    default: return message(ctx, c, dc, 405, "Not allowed", "This page takes no form posts.");
  }
}

/** Routes one request under <base><dc>/kv to `handle`, or answers why it names no page. */
function routed(ctx: UiContext, handle: typeof getPage) {
  return async (c: Context) => {
    const dc = c.req.param("dc") ?? "";
    const rest = kvRest(new URL(c.req.url).pathname, ctx.base) ?? "";
    if (rest === "") return c.redirect(kvHref(ctx.base, dc, { kind: "folder", folder: "" }), 302);
    const route = parseKvPath(rest.slice(1));
    if (!route) return message(ctx, c, dc, 400, "Bad request", "key: the address is not a valid Key/Value page (bad percent-encoding, a '.' or '..' part, or an action without a key).");
    try {
      return await handle(ctx, c, dc, route);
    } catch (err) {
      return ctx.failure(c, dc, err, "kv");
    }
  };
}

export const kvPages: UiPageModule = {
  routes(app, ctx) {
    app.get(`${ctx.base}:dc/kv/*`, routed(ctx, getPage));
    app.post(`${ctx.base}:dc/kv/*`, routed(ctx, postPage));
  },
  topics: {
    "kv-list": (ctx, dc, token, get) => {
      const folder = get("folder") ?? "";
      if (!reachableKvPath(folder)) return undefined;
      return {
        read: (minIndex, maxWaitMs, signal) => readFolder(ctx, dc, token, folder, { minIndex, maxWaitMs, signal }),
        render: async (v) => {
          const { items, exists } = v as Awaited<ReturnType<typeof readFolder>>["value"];
          return String(await String(<KvListLive base={ctx.base} dc={dc} folder={folder} items={items} exists={exists} />));
        },
      };
    },
    // Only a notice, never the form: editors do not refresh themselves.
    "kv-key": (ctx, dc, token, get) => {
      const key = get("key") ?? "";
      const opened = Number(get("opened") ?? "0") || 0;
      if (key === "" || !reachableKvPath(key)) return undefined;
      let index = opened;
      return {
        read: async (minIndex, maxWaitMs, signal) => {
          const r = await readKey(ctx, dc, token, key, { minIndex, maxWaitMs, signal });
          index = r.index;
          return r;
        },
        render: async (v) => String(await String(<KvChanged opened={opened} current={v as KvEntry | null} currentIndex={index} />)),
      };
    },
  },
  css: `.crumbs ol{list-style:none;display:flex;flex-wrap:wrap;gap:.3em;margin:0 0 .8em;padding:0}
.crumbs li+li::before{content:"/";color:var(--muted);margin-right:.3em}.crumbs a[aria-current=page]{font-weight:700;color:var(--fg)}
.kv-actions{list-style:none;display:flex;flex-wrap:wrap;gap:1.2em;margin:.4em 0 1em;padding:0}
.kv-form .field{margin:.6em 0}.kv-form label[for=kv-value],.kv-form label[for=kv-name]{display:block;font-weight:600}
.kv-form textarea{display:block;width:100%;font:13px/1.4 ui-monospace,"DejaVu Sans Mono",monospace;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:.4em}
.kv-form .hint,.kv-meta{color:var(--muted);font-size:.9em}.kv-form .hint{display:block}
.error,.conflict [role=alert]{color:var(--crit);font-weight:600}.notice{border-left:4px solid var(--warn);padding:.3em .6em;background:var(--head)}
#kv-current{border:1px solid var(--line);background:var(--head);padding:.6em;overflow:auto;max-height:20em;white-space:pre-wrap}
.kv-confirm{display:flex;gap:1em;align-items:center;flex-wrap:wrap}.kv-confirm p{flex-basis:100%}
button.danger{border-color:var(--crit);color:var(--crit);font-weight:600}`,
};
