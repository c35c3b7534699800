import { describe, expect, test } from "bun:test";
import { datacentersByDistance } from "./datacenters.ts";

describe("datacentersByDistance", () => {
  test("local first, then by median RTT of alive servers, unmeasured last, ties by name", () => {
    const servers = [
      { datacenter: "dc1", status: "alive" },
      { datacenter: "far", status: "alive", rttMs: 90 },
      { datacenter: "far", status: "alive", rttMs: 110 },
      { datacenter: "near", status: "alive", rttMs: 5 },
      { datacenter: "near", status: "failed", rttMs: 500 },
      { datacenter: "unknown-b", status: "alive" },
      { datacenter: "unknown-a", status: "failed", rttMs: 1 },
      { datacenter: "mid", status: "alive", rttMs: 40 },
    ];
    expect(datacentersByDistance("dc1", servers)).toEqual(["dc1", "near", "mid", "far", "unknown-a", "unknown-b"]);
  });

  test("a server alone in its pool knows its own datacenter", () => {
    expect(datacentersByDistance("dc1", [])).toEqual(["dc1"]);
  });
});
