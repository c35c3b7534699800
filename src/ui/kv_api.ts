/**
 * The Key/Value pages' reads of /v1/kv through the agent's own API. Unlike ctx.read, a 404 (no such
 * key, or an empty folder) is an answer here, with its X-Consul-Index: a deleted key still has an
 * index to block on, and an empty folder still lists. Other non-2xx answers throw ApiError.
 */
import { ApiError, type BlockingWait, type UiContext } from "./page.ts";
import { encodeKeyPath, folderItems, parseEntries, type FolderItem, type KvEntry } from "./kv_paths.ts";

export interface KvAnswer {
  /** 200, or 404 when nothing is there. */
  readonly status: number;
  readonly text: string;
  readonly index: number;
}

/** `path` (a /v1 path with its query) of `dc`, blocking past `wait.minIndex` when given. */
export async function kvGetRaw(ctx: UiContext, dc: string, token: string | undefined, path: string, wait?: BlockingWait): Promise<KvAnswer> {
  const extra: string[] = [];
  if (dc !== ctx.deps.datacenter) extra.push(`dc=${encodeURIComponent(dc)}`);
  if (wait) extra.push(`index=${wait.minIndex}`, `wait=${Math.max(0, Math.round(wait.maxWaitMs))}ms`);
  const full = extra.length === 0 ? path : `${path}${path.includes("?") ? "&" : "?"}${extra.join("&")}`;
  const res = await ctx.deps.api({ path: full, token, ...(wait ? { signal: wait.signal } : {}) });
  const text = await res.text();
  if (res.status !== 200 && res.status !== 404) throw new ApiError(res.status, text.trim() || `HTTP ${res.status}`);
  return { status: res.status, text, index: Number(res.headers.get("X-Consul-Index") ?? "0") || 0 };
}

export const kvApiPath = (key: string, query = ""): string => `/v1/kv/${encodeKeyPath(key)}${query ? `?${query}` : ""}`;

/** A folder's keys and sub-folders (`?keys&separator=/`); `exists` is false when the API knows nothing under it. */
export async function readFolder(ctx: UiContext, dc: string, token: string | undefined, folder: string, wait?: BlockingWait): Promise<{ readonly value: { readonly items: FolderItem[]; readonly exists: boolean }; readonly index: number }> {
  const r = await kvGetRaw(ctx, dc, token, kvApiPath(folder, "keys&separator=/"), wait);
  const keys = r.status === 200 ? JSON.parse(r.text) as string[] : [];
  return { value: { items: folderItems(folder, keys), exists: r.status === 200 }, index: r.index };
}

/** One key, or null when it does not exist; the index is its ModifyIndex, or the table's when it is gone. */
export async function readKey(ctx: UiContext, dc: string, token: string | undefined, key: string, wait?: BlockingWait): Promise<{ readonly value: KvEntry | null; readonly index: number }> {
  const r = await kvGetRaw(ctx, dc, token, kvApiPath(key), wait);
  return { value: r.status === 200 ? parseEntries(r.text)[0] ?? null : null, index: r.index };
}

/** Every entry under `prefix` (`?recurse`), in key order; none when the API answers 404. */
export async function readTree(ctx: UiContext, dc: string, token: string | undefined, prefix: string): Promise<KvEntry[]> {
  const r = await kvGetRaw(ctx, dc, token, kvApiPath(prefix, "recurse"));
  return r.status === 200 ? parseEntries(r.text) : [];
}
