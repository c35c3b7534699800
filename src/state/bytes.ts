/** Base64 and canonical JSON helpers for the command codec and snapshots. */

export { fromBase64, toBase64 } from "../lib/index.ts";

/**
 * JSON with object keys sorted at every level, so equal values always give equal text.
 * Values must be JSON values (no undefined inside arrays, no Uint8Array); a bigint (an integer past 2^53
 * that the log's exact reader kept, e.g. inside a proxy's opaque Config) is written as its exact digits.
 */
export function canonicalJson(v: unknown): string {
  if (typeof v === "bigint") return v.toString();
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  const o = v as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(o).sort()) {
    if (o[k] === undefined) continue;
    parts.push(`${JSON.stringify(k)}:${canonicalJson(o[k])}`);
  }
  return `{${parts.join(",")}}`;
}
