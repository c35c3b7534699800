/**
 * The Key/Value pages' URLs and pure helpers. URL scheme (Consul's UI, plus three actions of ours):
 *   <base><dc>/kv/<folder>          a folder's listing (folder "" is the root; a folder ends with "/")
 *   <base><dc>/kv/<key>/edit        a key's editor
 *   <base><dc>/kv/<folder>create    the create form (a name ending in "/" makes a folder)
 *   <base><dc>/kv/<folder>delete    recursive delete of a folder (GET confirms, POST deletes)
 *   <base><dc>/kv/<folder>export    the folder as `consul kv export` JSON (a download)
 *   <base><dc>/kv/<key>/delete-key  delete of one key (GET confirms, POST deletes with ?cas=)
 * Each "/"-separated segment of a key is percent-encoded on its own (spaces, "%", "?", "#", unicode),
 * so any key round-trips; only segments "." and ".." cannot (URL parsers resolve them), so the create
 * form refuses them.
 */

export type KvRoute =
  | { readonly kind: "folder"; readonly folder: string }
  | { readonly kind: "edit" | "delete-key"; readonly key: string }
  | { readonly kind: "create" | "delete" | "export"; readonly folder: string }
  /** A folder named without its trailing "/" ("<base><dc>/kv/app"): answered with a redirect. */
  | { readonly kind: "bare"; readonly folder: string };

const FOLDER_ACTIONS = new Set(["create", "delete", "export"]);
const KEY_ACTIONS = new Set(["edit", "delete-key"]);

/** A key or folder path with each segment percent-encoded and the "/" separators kept. */
export function encodeKeyPath(key: string): string {
  return key.split("/").map(encodeURIComponent).join("/");
}

/** The page URL of `route` in `dc`. */
export function kvHref(base: string, dc: string, route: KvRoute): string {
  const root = `${base}${encodeURIComponent(dc)}/kv/`;
  switch (route.kind) {
    case "folder": return root + encodeKeyPath(route.folder);
    case "bare": return root + encodeKeyPath(route.folder);
    case "edit": case "delete-key": return `${root}${encodeKeyPath(route.key)}/${route.kind}`;
    default: return `${root}${encodeKeyPath(route.folder)}${route.kind}`;
  }
}

/**
 * The route of the raw (still percent-encoded) path after ".../kv/"; undefined when it names no page
 * (bad escaping, or a key action without a key).
 */
export function parseKvPath(rest: string): KvRoute | undefined {
  let segments: string[];
  try {
    segments = rest.split("/").map(decodeURIComponent);
  } catch {
    return undefined;
  }
  // A decoded segment may hold "/" (%2F): a "." or ".." part anywhere would climb out of /v1/kv.
  if (!reachableKvPath(segments.join("/"))) return undefined;
  const last = segments.pop()!;
  const before = segments.join("/");
  if (last === "") return { kind: "folder", folder: rest === "" ? "" : `${before}/` };
  const folder = segments.length === 0 ? "" : `${before}/`;
  if (FOLDER_ACTIONS.has(last)) return { kind: last as "create" | "delete" | "export", folder };
  if (KEY_ACTIONS.has(last)) return before === "" ? undefined : { kind: last as "edit" | "delete-key", key: before };
  return { kind: "bare", folder: `${folder}${last}/` };
}

/**
 * Whether `path` (a key or folder) can be put in a URL unchanged: none of its "/"-separated parts is
 * "." or "..", which URLs collapse (and which would lead an API call out of /v1/kv).
 */
export function reachableKvPath(path: string): boolean {
  return !path.split("/").some((part) => part === "." || part === "..");
}

/** The folder holding `path` (a key, or a folder ending in "/"): "a/b/" for "a/b/c" and for "a/b/c/"; "" at the top. */
export function parentFolder(path: string): string {
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path;
  const at = trimmed.lastIndexOf("/");
  return at < 0 ? "" : trimmed.slice(0, at + 1);
}

/** The last part of `path` relative to its parent folder ("c" of "a/b/c", "c/" of "a/b/c/"). */
export function baseName(path: string): string {
  return path.slice(parentFolder(path).length);
}

/** The breadcrumbs of `folder`: the root ("" named "Key/Value") and every folder down to `folder`. */
export function breadcrumbs(folder: string): { readonly name: string; readonly folder: string }[] {
  const crumbs = [{ name: "Key/Value", folder: "" }];
  let at = 0;
  while (at < folder.length) {
    const next = folder.indexOf("/", at);
    if (next < 0) break;
    crumbs.push({ name: folder.slice(at, next), folder: folder.slice(0, next + 1) });
    at = next + 1;
  }
  return crumbs;
}

export interface FolderItem {
  /** The full key, or the sub-folder's full path ending in "/". */
  readonly path: string;
  /** Relative to the listed folder. */
  readonly name: string;
  readonly isFolder: boolean;
}

/** The answer of `?keys&separator=/` for `folder` as rows: the folder's own key left out, sub-folders first. */
export function folderItems(folder: string, keys: readonly string[]): FolderItem[] {
  const items = keys.filter((k) => k !== folder && k.startsWith(folder)).map((k) => ({ path: k, name: k.slice(folder.length), isFolder: k.endsWith("/") }));
  return [...items.filter((i) => i.isFolder), ...items.filter((i) => !i.isFolder)];
}

/**
 * Why a name typed in the create form cannot be used, or undefined when it can: it must not be empty,
 * start with "/", or have a "." or ".." segment (those do not survive a URL).
 */
export function nameProblem(name: string): string | undefined {
  if (name === "") return "name: enter a key name (end it with / to create a folder)";
  if (name.startsWith("/")) return "name: must not start with /";
  const segments = name.split("/");
  if (name.endsWith("/")) segments.pop();
  if (segments.some((s) => s === "." || s === "..")) return 'name: a part between slashes may not be "." or ".."';
  return undefined;
}

/** The bytes of a base64 value (null: no value, as Consul stores an empty body). */
export function base64Bytes(value: string | null): Uint8Array {
  if (!value) return new Uint8Array();
  const raw = atob(value);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

export function bytesBase64(bytes: Uint8Array): string {
  let raw = "";
  for (let i = 0; i < bytes.length; i += 0x8000) raw += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(raw);
}

/** The value as text when it is valid UTF-8 (editable); undefined for binary values. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The parse error of `text` as JSON, or undefined when it is valid JSON. */
export function jsonProblem(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Whether the JSON toggle starts on: the value is a JSON object or array. */
export function looksLikeJson(text: string): boolean {
  const t = text.trim();
  return (t.startsWith("{") || t.startsWith("[")) && jsonProblem(t) === undefined;
}

/**
 * A submitted textarea's text with the line ends it had: browsers send textarea lines ended by CRLF,
 * so they become LF again unless the value was opened with CRLF line ends (`eol` "crlf").
 */
export function submittedText(text: string, eol: string | undefined): string {
  return eol === "crlf" ? text.replace(/\r?\n/g, "\r\n") : text.replace(/\r\n/g, "\n");
}

/**
 * Every entry's `Flags` of a KV answer's JSON text, as exact decimal digits in entry order (flags are
 * a uint64: JSON.parse would round those past 2^53). Keys are JSON strings, so `"Flags":` with its
 * quotes unescaped appears only as the field.
 */
export function flagsOf(json: string): string[] {
  return [...json.matchAll(/"Flags":\s*(\d+)/g)].map((m) => m[1]!);
}

/** A KV entry as the API answers it (Flags as exact digits, see flagsOf). */
export interface KvEntry {
  readonly Key: string;
  readonly Flags: string;
  readonly Value: string | null;
  readonly Session?: string;
  readonly LockIndex: number;
  readonly CreateIndex: number;
  readonly ModifyIndex: number;
}

/** The entries of a KV answer's JSON text, with their flags exact. */
export function parseEntries(json: string): KvEntry[] {
  const flags = flagsOf(json);
  return (JSON.parse(json) as Omit<KvEntry, "Flags">[]).map((e, i) => ({ ...e, Flags: flags[i] ?? "0" }));
}

/** `consul kv export`'s format: a tab-indented array of {key, flags, value (base64, "" for none)}. */
export function exportJson(entries: readonly KvEntry[]): string {
  if (entries.length === 0) return "[]\n";
  const rows = entries.map((e) => `\t{\n\t\t"key": ${JSON.stringify(e.Key)},\n\t\t"flags": ${/^\d+$/.test(e.Flags) ? e.Flags : "0"},\n\t\t"value": ${JSON.stringify(e.Value ?? "")}\n\t}`);
  return `[\n${rows.join(",\n")}\n]\n`;
}

/** The download's file name: "kv-<dc>[-<folder>].json" with anything but letters, digits, ".", "_" and "-" as "_". */
export function exportFileName(dc: string, folder: string): string {
  const folderPart = folder.replace(/\/$/, "");
  return `kv-${dc}${folderPart ? `-${folderPart}` : ""}.json`.replace(/[^A-Za-z0-9._-]/g, "_");
}
