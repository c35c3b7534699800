import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import type { KVWrite, KVWriteVerb } from "../model/index.ts";
import { decodeCommand, encodeCommand } from "./codec.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";

const VERBS: KVWriteVerb[] = ["set", "cas", "lock", "unlock", "delete", "delete-cas", "delete-tree"];
const enc = new TextEncoder();

describe("binary KV command encoding", () => {
  test("round-trips every verb with and without optional fields (seeded)", () => {
    const rng = seededRng(11);
    for (let i = 0; i < 2000; i++) {
      const entry: KVWrite = {
        Key: ["", "a", "app/config/x", "ключ/✓", "k".repeat(300)][rng.int(5)]!,
        ...(rng.int(2) ? { Flags: [0, 1, 42, 2 ** 40][rng.int(4)]! } : {}),
        ...(rng.int(3) === 0 ? {} : { Value: rng.int(4) === 0 ? null : rng.bytes(rng.int(700)) }),
        ...(rng.int(2) ? { Session: ["", "0b5e9a1c-8d6f-4f51-9d3a-2c4e6f7a8b9c"][rng.int(2)]! } : {}),
        ...(rng.int(2) ? { ModifyIndex: [0, 7, 2 ** 50][rng.int(3)]! } : {}),
      };
      const cmd: StateCommand = { type: "kv", op: VERBS[rng.int(VERBS.length)]!, entry };
      const bytes = encodeCommand(cmd);
      expect(bytes[0]).toBe(1);
      expect(decodeCommand(bytes)).toEqual(cmd);
    }
  });

  test("KV commands written as JSON by earlier versions still decode", () => {
    const json = enc.encode(JSON.stringify({ type: "kv", op: "set", entry: { Key: "k", Flags: 3, Value: "aGk=" } }));
    expect(decodeCommand(json)).toEqual({ type: "kv", op: "set", entry: { Key: "k", Flags: 3, Value: enc.encode("hi") } });
  });

  test("truncated, padded or garbled binary commands are StateCommandErrors (seeded)", () => {
    const good = encodeCommand({ type: "kv", op: "cas", entry: { Key: "key", Value: enc.encode("value"), ModifyIndex: 9, Session: "s" } });
    for (let cut = 1; cut < good.length; cut++) expect(() => decodeCommand(good.subarray(0, cut))).toThrow(StateCommandError);
    expect(() => decodeCommand(new Uint8Array([...good, 0]))).toThrow(/trailing bytes/);
    expect(() => decodeCommand(new Uint8Array([1, 99]))).toThrow(/verb 99 is unknown/);
    const rng = seededRng(12);
    for (let i = 0; i < 3000; i++) {
      const junk = new Uint8Array([1, ...rng.bytes(rng.int(40))]);
      try {
        decodeCommand(junk);
      } catch (err) {
        if (!(err instanceof StateCommandError)) throw new Error(`seed 12, case ${i}: ${String(err)}`);
      }
    }
  });
});
