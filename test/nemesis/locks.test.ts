import { describe, expect, test } from "bun:test";
import { checkLockHolds, type LockHold } from "./locks.ts";

const hold = (client: number, from: number, to: number, lock = "l"): LockHold => ({ client, lock, from, to });

describe("checkLockHolds", () => {
  test("back-to-back and separate holds pass; locks are independent", () => {
    expect(checkLockHolds([hold(1, 0, 10), hold(2, 10, 20), hold(1, 25, 30), hold(2, 5, 8, "other")])).toEqual([]);
  });

  test("two clients holding at once are reported, also behind a long earlier hold", () => {
    expect(checkLockHolds([hold(1, 0, 10), hold(2, 5, 12)])).toEqual([[hold(1, 0, 10), hold(2, 5, 12)]]);
    // Client 3's hold starts inside client 1's long one, after client 2's short one ended.
    expect(checkLockHolds([hold(1, 0, 100), hold(2, 1, 2), hold(3, 50, 60)]).map(([a, b]) => [a.client, b.client])).toEqual([[1, 2], [1, 3]]);
  });

  test("one client's own holds never conflict", () => {
    expect(checkLockHolds([hold(1, 0, 10), hold(1, 5, 15)])).toEqual([]);
  });
});
