import { describe, expect, test } from "bun:test";
import type { KvPair } from "./api.ts";
import {
  contenderKey, decodeSemaphoreLock, encodeSemaphoreLock, findSemaphoreLock, pruneDeadHolders, SEMAPHORE_FLAG_VALUE, semaphoreAcquireStep, semaphoreDestroyStep,
  semaphoreReleaseStep, semaphoreStillHeld,
} from "./semaphore_core.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const lockPair = (value: string | null, o: Partial<KvPair> = {}): KvPair => ({ Key: "jobs/.lock", Flags: SEMAPHORE_FLAG_VALUE, Value: value === null ? null : enc(value), Session: "", ModifyIndex: 9n, ...o });
const contender = (session: string): KvPair => ({ Key: contenderKey("jobs", session), Flags: SEMAPHORE_FLAG_VALUE, Value: null, Session: session, ModifyIndex: 3n });
const holders = (...ids: string[]) => JSON.stringify({ Limit: 2, Holders: Object.fromEntries(ids.map((id) => [id, true])) });

describe("the .lock value", () => {
  test("encodes as json.Marshal does: Limit, then Holders with sorted keys", () => {
    expect(encodeSemaphoreLock({ limit: 3, holders: new Map([["b", true], ["a", true], ["c", false]]) })).toBe('{"Limit":3,"Holders":{"a":true,"b":true,"c":false}}');
    expect(encodeSemaphoreLock({ limit: 2, holders: new Map() })).toBe('{"Limit":2,"Holders":{}}');
  });

  test("decodes as encoding/json does: no value is an empty lock at our limit; any letter case; null holders are none", () => {
    expect(decodeSemaphoreLock(null, 4)).toEqual({ limit: 4, holders: new Map() });
    expect(decodeSemaphoreLock(enc('{"limit":2,"HOLDERS":{"s1":true}}'), 4)).toEqual({ limit: 2, holders: new Map([["s1", true]]) });
    expect(decodeSemaphoreLock(enc('{"Limit":2,"Holders":null}'), 4)).toEqual({ limit: 2, holders: new Map() });
    expect(decodeSemaphoreLock(enc("{}"), 4)).toEqual({ limit: 0, holders: new Map() });
  });

  test("a bad value fails with Go's texts behind `lock decoding failed: `", () => {
    expect(() => decodeSemaphoreLock(enc('{"Limit":"2"}'), 2)).toThrow("lock decoding failed: json: cannot unmarshal string into Go struct field semaphoreLock.Limit of type int");
    expect(() => decodeSemaphoreLock(enc("[]"), 2)).toThrow("lock decoding failed: json: cannot unmarshal array into Go value of type api.semaphoreLock");
    expect(() => decodeSemaphoreLock(enc("nope"), 2)).toThrow(/^lock decoding failed: invalid character/);
  });
});

describe("the decisions of api.Semaphore", () => {
  test("findSemaphoreLock: the .lock pair, else a blank one at index 0", () => {
    expect(findSemaphoreLock([contender("s1"), lockPair("x")], "jobs").ModifyIndex).toBe(9n);
    expect(findSemaphoreLock([contender("s1")], "jobs")).toEqual({ Key: "jobs/.lock", Flags: SEMAPHORE_FLAG_VALUE, Value: null, Session: "", ModifyIndex: 0n });
  });

  test("pruneDeadHolders keeps holders whose session holds some key", () => {
    const lock = decodeSemaphoreLock(enc(holders("s1", "s2", "s3")), 2);
    expect([...pruneDeadHolders(lock, [contender("s1"), contender("s3"), lockPair(null)]).holders.keys()]).toEqual(["s1", "s3"]);
  });

  test("acquire: the first contender CASes at index 0", () => {
    expect(semaphoreAcquireStep([contender("me")], "jobs", "me", 2)).toEqual({ kind: "cas", value: '{"Limit":2,"Holders":{"me":true}}', index: 0n });
  });

  test("acquire: a free slot (after pruning the dead) is taken at the .lock index; a full set waits", () => {
    const pairs = [contender("a"), contender("me"), lockPair(holders("a", "dead"))];
    expect(semaphoreAcquireStep(pairs, "jobs", "me", 2)).toEqual({ kind: "cas", value: '{"Limit":2,"Holders":{"a":true,"me":true}}', index: 9n });
    expect(semaphoreAcquireStep([contender("a"), contender("b"), contender("me"), lockPair(holders("a", "b"))], "jobs", "me", 2)).toEqual({ kind: "full" });
  });

  test("acquire: flag and limit conflicts", () => {
    expect(semaphoreAcquireStep([lockPair(holders(), { Flags: 0x2ddccbc058a50c18n })], "jobs", "me", 2)).toEqual({ kind: "conflict" });
    expect(semaphoreAcquireStep([lockPair('{"Limit":5,"Holders":{}}')], "jobs", "me", 2)).toEqual({ kind: "limit-conflict", lockLimit: 5 });
  });

  test("release: drops us with CAS at the index, or does nothing when we are not listed", () => {
    expect(semaphoreReleaseStep(lockPair(holders("a", "me")), "me", 2)).toEqual({ kind: "cas", value: '{"Limit":2,"Holders":{"a":true}}', index: 9n });
    expect(semaphoreReleaseStep(lockPair(holders("a")), "me", 2)).toEqual({ kind: "none" });
    expect(semaphoreReleaseStep(undefined, "me", 2)).toEqual({ kind: "none" });
  });

  test("monitoring: held while listed and alive; a bad value counts as lost", () => {
    expect(semaphoreStillHeld([contender("me"), lockPair(holders("me"))], "jobs", "me", 2)).toBe(true);
    expect(semaphoreStillHeld([lockPair(holders("me"))], "jobs", "me", 2)).toBe(false);
    expect(semaphoreStillHeld([contender("me"), lockPair(holders("a"))], "jobs", "me", 2)).toBe(false);
    expect(semaphoreStillHeld([contender("me"), lockPair("{")], "jobs", "me", 2)).toBe(false);
  });

  test("destroy: absent, conflict, in use by a live holder, else delete at the index", () => {
    expect(semaphoreDestroyStep([], "jobs", 2)).toEqual({ kind: "absent" });
    expect(semaphoreDestroyStep([lockPair(holders(), { Flags: 0n })], "jobs", 2)).toEqual({ kind: "conflict" });
    expect(semaphoreDestroyStep([contender("a"), lockPair(holders("a"))], "jobs", 2)).toEqual({ kind: "in-use" });
    expect(semaphoreDestroyStep([lockPair(holders("gone"))], "jobs", 2)).toEqual({ kind: "delete", index: 9n });
  });
});
