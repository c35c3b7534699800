/**
 * The web UI's static assets, embedded as strings (portable: the compiled binary and Deno from source
 * serve them with no file system and no network; `with { type: "file" }` imports do not work on Deno),
 * each named with a content hash so it can be cached forever: one stylesheet and one client module,
 * each the shared base plus what the page modules add.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { UI_CSS } from "./style.ts";
import { LIVE_JS } from "./live_client.ts";

export interface Asset {
  /** "style-<hash>.css". */
  readonly name: string;
  readonly contentType: string;
  readonly body: string;
}

export interface UiAssets {
  readonly style: Asset;
  readonly client: Asset;
  /** The asset called `name`, or undefined (an old hash after an upgrade, or anything else). */
  named(name: string): Asset | undefined;
}

function hashed(base: string, ext: string, contentType: string, body: string): Asset {
  const hash = bytesToHex(sha256(new TextEncoder().encode(body))).slice(0, 12);
  return { name: `${base}-${hash}.${ext}`, contentType, body };
}

/** The assets of the base plus `parts` (each page module's css and client script; a script runs in its own block). */
export function buildAssets(parts: readonly { readonly css?: string; readonly client?: string }[]): UiAssets {
  const style = hashed("style", "css", "text/css; charset=utf-8", [UI_CSS, ...parts.map((p) => p.css ?? "")].join(""));
  const client = hashed("live", "js", "text/javascript; charset=utf-8", [LIVE_JS, ...parts.filter((p) => p.client).map((p) => `{${p.client}}\n`)].join(""));
  const byName = new Map([style, client].map((a) => [a.name, a]));
  return { style, client, named: (name) => byName.get(name) };
}
