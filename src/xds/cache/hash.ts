/**
 * Resource and type versions as hashes: SHA-256, truncated to 128 bits, lower-case hex.
 *
 * A resource's version is the hash of its serialized bytes, so two servers (or one server after a
 * restart) that produce the same bytes announce the same version; a delta client reconnecting with
 * `initial_resource_versions` is then sent only what really differs.
 *
 * Hashed with `node:crypto` (native on Bun, Deno and Node): every proxy update hashes its changed
 * types, and a JavaScript SHA-256 took several times as long (test/bench/xds_render.ts).
 */
import { createHash } from "node:crypto";

/** Hex characters kept from the SHA-256 digest (128 bits). */
const VERSION_HEX_CHARS = 32;

/** The version of one resource: a truncated SHA-256 of its deterministic bytes. */
export function resourceVersion(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex").slice(0, VERSION_HEX_CHARS);
}

/**
 * The SotW version of a type: a truncated SHA-256 over `name NUL version LF` (UTF-8) for each
 * resource, in the order given (callers pass names sorted). Equal content gives an equal version; any
 * change to a name, a resource's bytes, or the set of names changes it (with overwhelming probability).
 */
export function typeVersion(entries: Iterable<readonly [name: string, version: string]>): string {
  let text = "";
  for (const [name, version] of entries) text += `${name}\u0000${version}\n`;
  return createHash("sha256").update(text, "utf8").digest("hex").slice(0, VERSION_HEX_CHARS);
}
