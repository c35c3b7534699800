import { describe, expect, test } from "bun:test";
import { decodeCommand, encodeCommand } from "./codec.ts";
import type { StateCommand } from "./commands.ts";
import { harness, utf8, ws } from "./fixtures.test.ts";
import { kvGet } from "./queries_kv.ts";
import { createStateMachine } from "./state_machine.ts";

const MAX = 18446744073709551615n;

describe("uint64 KV flags and compare indexes in the state", () => {
  test("a command with flags past 2^53 goes to the log as exact JSON and decodes to the same bigint", () => {
    const cmd: StateCommand = { type: "kv", op: "set", entry: { Key: "k", Flags: MAX, Value: utf8("v") } };
    const bytes = encodeCommand(cmd);
    expect(bytes[0]).toBe("{".charCodeAt(0));
    expect(new TextDecoder().decode(bytes)).toContain('"Flags":18446744073709551615');
    expect(decodeCommand(bytes)).toEqual(cmd);
    const small: StateCommand = { type: "kv", op: "set", entry: { Key: "k", Flags: 7, Value: null } };
    expect(encodeCommand(small)[0]).toBe(0x01); // safe integers keep the compact binary form
    const txn: StateCommand = { type: "txn", ops: [{ KV: { Verb: "cas", Key: "k", Flags: MAX, Index: 9007199254740993n, Value: utf8("x") } }] };
    expect(decodeCommand(encodeCommand(txn))).toEqual(txn);
    expect(() => decodeCommand(new TextEncoder().encode('{"type":"kv","op":"set","entry":{"Key":"k","Flags":18446744073709551616}}'))).toThrow("unsigned 64-bit");
    expect(() => decodeCommand(new TextEncoder().encode('{"type":"kv","op":"set","entry":{"Key":"k","Flags":-1}}'))).toThrow("unsigned 64-bit");
  });

  test("stored flags stay exact through apply, snapshot and restore; a compare index past 2^53 never matches", () => {
    const h = harness();
    h.apply({ type: "kv", op: "set", entry: { Key: "k", Flags: MAX, Value: utf8("v") } });
    expect(kvGet(h.store, ws(), "k").value?.Flags).toBe(MAX);
    expect(h.apply({ type: "kv", op: "cas", entry: { Key: "k", Value: utf8("w"), ModifyIndex: 2n ** 60n } })).toEqual({ type: "kv", ok: false });
    const copy = harness();
    createStateMachine(copy.store).restore(createStateMachine(h.store).snapshot());
    expect(kvGet(copy.store, ws(), "k").value?.Flags).toBe(MAX);
  });
});
