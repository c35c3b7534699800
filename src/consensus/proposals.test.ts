import { describe, expect, test } from "bun:test";
import { seededRng } from "../platform/index.ts";
import { AppliedProposals, decodeDriverSnapshot, encodeDriverSnapshot, envelopeCommand, envelopeKey, ProposalIds } from "./proposals.ts";

describe("proposal envelopes", () => {
  test("wrap a command with a unique id per call and per incarnation", () => {
    const a = new ProposalIds(seededRng(1)), b = new ProposalIds(seededRng(2));
    const x = a.wrap(new Uint8Array([7])), y = a.wrap(new Uint8Array([7])), z = b.wrap(new Uint8Array([7]));
    expect(new Set([x.key, y.key, z.key]).size).toBe(3);
    expect(envelopeKey(x.data)).toBe(x.key);
    expect([...envelopeCommand(x.data)]).toEqual([7]);
    expect(a.incarnation).not.toBe(b.incarnation);
  });
});

describe("AppliedProposals", () => {
  test("applies each id once, tolerates reordering within the window, and treats older ids as duplicates", () => {
    const ids = new ProposalIds(seededRng(3));
    const env = Array.from({ length: 10 }, () => ids.wrap(new Uint8Array()).data);
    const t = new AppliedProposals(4);
    expect(t.firstTime(env[1]!, 1)).toBe(true);
    expect(t.firstTime(env[0]!, 2)).toBe(true); // reordered but inside the window
    expect(t.firstTime(env[1]!, 3)).toBe(false); // duplicate
    expect(t.firstTime(env[9]!, 4)).toBe(true);
    expect(t.firstTime(env[2]!, 5)).toBe(false); // 3 <= 10 - 4: too old, counted as a duplicate
    expect(t.firstTime(env[7]!, 6)).toBe(true);
    expect(t.firstTime(new Uint8Array(), 7)).toBe(true); // no id (a leader's no-op): always applied
  });

  test("survives a snapshot round trip and forgets the least recently applied proposer first", () => {
    const t = new AppliedProposals(16, 2);
    const p1 = new ProposalIds(seededRng(1)), p2 = new ProposalIds(seededRng(2)), p3 = new ProposalIds(seededRng(3));
    const a = p1.wrap(new Uint8Array()).data, b = p2.wrap(new Uint8Array()).data, c = p3.wrap(new Uint8Array()).data;
    t.firstTime(a, 1);
    t.firstTime(b, 2);
    const copy = new AppliedProposals(16, 2);
    copy.restore(JSON.parse(JSON.stringify(t.encode())));
    expect(copy.firstTime(a, 3)).toBe(false);
    expect(copy.encode()).toEqual(t.encode());
    t.firstTime(c, 3); // evicts p1's entry (applied least recently)
    expect(t.firstTime(b, 4)).toBe(false);
    expect(t.firstTime(a, 5)).toBe(true);
  });

  test("driver snapshots carry the table and the machine's bytes", () => {
    const bytes = encodeDriverSnapshot([["ab", 3, [3], 9]], new Uint8Array([1, 2, 3]));
    const { table, machine } = decodeDriverSnapshot(bytes);
    expect(table).toEqual([["ab", 3, [3], 9]]);
    expect([...machine]).toEqual([1, 2, 3]);
    expect(() => decodeDriverSnapshot(new Uint8Array(8))).toThrow("bad magic");
  });
});
