/**
 * The web UI's static assets, embedded as strings (portable: the compiled binary and Deno from source
 * serve them with no file system and no network; `with { type: "file" }` imports do not work on Deno),
 * each named with a content hash so it can be cached forever.
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

function hashed(base: string, ext: string, contentType: string, body: string): Asset {
  const hash = bytesToHex(sha256(new TextEncoder().encode(body))).slice(0, 12);
  return { name: `${base}-${hash}.${ext}`, contentType, body };
}

export const STYLE = hashed("style", "css", "text/css; charset=utf-8", UI_CSS);
export const LIVE = hashed("live", "js", "text/javascript; charset=utf-8", LIVE_JS);

const BY_NAME = new Map([STYLE, LIVE].map((a) => [a.name, a]));

/** The asset called `name`, or undefined (an old hash after an upgrade, or anything else). */
export function assetNamed(name: string): Asset | undefined {
  return BY_NAME.get(name);
}
