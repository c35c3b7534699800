/**
 * The WAN pool's address index (memberAddressIndex), the wanfed transport's `nameOf` fallback:
 * built once per membership change, not scanned per lookup.
 */
import { describe, expect, test } from "bun:test";
import type { PoolMember } from "../membership/index.ts";
import { memberAddressIndex } from "./gossip.ts";

const member = (name: string, addr: string, port = 8302): PoolMember => ({ name, addr, port, tags: {}, status: "alive" });

describe("memberAddressIndex", () => {
  test("looks up by host:port (IPv6 bracketed) and reads the members once until invalidated", () => {
    let members: PoolMember[] | undefined;
    let reads = 0;
    const index = memberAddressIndex(() => (reads++, members));
    expect(index.nameOf("10.0.0.1:8302")).toBeUndefined(); // no pool yet: nothing cached
    members = [member("s1.dc1", "10.0.0.1"), member("s2.dc2", "2001:db8::2")];
    expect(index.nameOf("10.0.0.1:8302")).toBe("s1.dc1");
    expect(index.nameOf("[2001:db8::2]:8302")).toBe("s2.dc2");
    expect(index.nameOf("10.0.0.1:8301")).toBeUndefined();
    for (let i = 0; i < 100; i++) index.nameOf("10.0.0.1:8302");
    expect(reads).toBe(2);

    members = [member("s1.dc1", "10.0.0.7")]; // moved: stale until the member event invalidates
    expect(index.nameOf("10.0.0.7:8302")).toBeUndefined();
    index.invalidate();
    expect(index.nameOf("10.0.0.7:8302")).toBe("s1.dc1");
    expect(index.nameOf("10.0.0.1:8302")).toBeUndefined();
    expect(reads).toBe(3);
  });

  test("members sharing an address: the first in members() order wins", () => {
    const index = memberAddressIndex(() => [member("s5.dc1", "10.0.0.5"), member("s5.dc2", "10.0.0.5"), member("s5.dc3", "10.0.0.5")]);
    expect(index.nameOf("10.0.0.5:8302")).toBe("s5.dc1");
  });
});
