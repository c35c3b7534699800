/**
 * A compact binary log encoding for single-key KV writes, the bulk of a busy cluster's log: JSON with
 * base64 values cost a third of the value's size and an encode/decode pass on every server. Marked by
 * a first byte of 0x01 (a JSON command starts with `{`), so both encodings decode side by side.
 *
 * Layout: 0x01, verb (index into KV_VERB_ORDER), then varints and UTF-8 strings:
 * key (length, bytes); flags (0 absent, n+1); ModifyIndex (0 absent, n+1);
 * session (0 absent, length+1, bytes); value (0 absent, 1 null, length+2, bytes).
 */
import { ByteBuffer } from "../lib/index.ts";
import type { KVWrite, KVWriteVerb } from "../model/index.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";

export const KV_BINARY_MARKER = 0x01;
const KV_VERB_ORDER: readonly KVWriteVerb[] = ["set", "cas", "lock", "unlock", "delete", "delete-cas", "delete-tree"];
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const utf8 = new TextEncoder();
const utf8d = new TextDecoder("utf-8", { fatal: true });

/** Flags and ModifyIndex as this encoding carries them: safe integers (encodeCommand sends others as JSON). */
function safeOf(n: number | bigint | undefined, what: string): number | undefined {
  if (typeof n === "bigint" || (n !== undefined && n >= MAX_SAFE)) throw new RangeError(`the binary KV encoding cannot carry ${what} ${n}`);
  return n;
}

/** The binary encoding of a `kv` command whose Flags and ModifyIndex are below 2^53 - 1. */
export function encodeKvCommand(op: KVWriteVerb, e: KVWrite): Uint8Array {
  const flags = safeOf(e.Flags, "Flags"), modifyIndex = safeOf(e.ModifyIndex, "ModifyIndex");
  const o = new ByteBuffer(64);
  o.byte(KV_BINARY_MARKER);
  o.byte(KV_VERB_ORDER.indexOf(op));
  const key = utf8.encode(e.Key);
  o.varint(key.length);
  o.raw(key);
  o.varint(flags === undefined ? 0 : flags + 1);
  o.varint(modifyIndex === undefined ? 0 : modifyIndex + 1);
  if (e.Session === undefined) o.varint(0);
  else {
    const s = utf8.encode(e.Session);
    o.varint(s.length + 1);
    o.raw(s);
  }
  if (e.Value === undefined) o.varint(0);
  else if (e.Value === null) o.varint(1);
  else {
    o.varint(e.Value.length + 2);
    o.raw(e.Value);
  }
  return o.bytes();
}

function bad(what: string): never {
  throw new StateCommandError(`invalid state command: binary kv ${what}`);
}

/** Decodes the binary `kv` encoding; throws StateCommandError on anything malformed. */
export function decodeKvCommand(b: Uint8Array): StateCommand {
  let pos = 1;
  const varint = (what: string): number => {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= b.length) bad(`${what} is truncated`);
      const x = b[pos++]!;
      result += (x & 0x7f) * scale;
      if (!(x & 0x80)) {
        if (result > MAX_SAFE) bad(`${what} exceeds 2^53 - 1`);
        return result;
      }
      scale *= 0x80;
    }
    return bad(`${what} is not a varint`);
  };
  const bytes = (n: number, what: string): Uint8Array => {
    if (pos + n > b.length) bad(`${what} runs past the end`);
    const out = b.slice(pos, pos + n);
    pos += n;
    return out;
  };
  const text = (n: number, what: string): string => {
    try {
      return utf8d.decode(bytes(n, what));
    } catch (err) {
      if (err instanceof StateCommandError) throw err;
      return bad(`${what} is not UTF-8`);
    }
  };
  if (pos >= b.length) bad("has no verb");
  const op = KV_VERB_ORDER[b[pos++]!];
  if (!op) bad(`verb ${b[pos - 1]} is unknown`);
  const Key = text(varint("key length"), "key");
  const flags = varint("flags");
  const modify = varint("ModifyIndex");
  const sessionLen = varint("session length");
  const Session = sessionLen === 0 ? undefined : text(sessionLen - 1, "session");
  const valueTag = varint("value length");
  const Value = valueTag === 0 ? undefined : valueTag === 1 ? null : bytes(valueTag - 2, "value");
  if (pos !== b.length) bad(`has ${b.length - pos} trailing bytes`);
  const entry: KVWrite = {
    Key,
    ...(flags === 0 ? {} : { Flags: flags - 1 }),
    ...(Value === undefined ? {} : { Value }),
    ...(Session === undefined ? {} : { Session }),
    ...(modify === 0 ? {} : { ModifyIndex: modify - 1 }),
  };
  return { type: "kv", op, entry };
}
