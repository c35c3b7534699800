import { describe, expect, test } from "bun:test";
import { formatRfc3339 } from "../../connect/index.ts";
import { silentLogger } from "../../platform/index.ts";
import { simClock } from "../../../test/harness/sim_clock.ts";
import { caRootsType, createAgentCache, getLeaf, LEAF_UNUSED_TTL_MS, leafCertType } from "./index.ts";

const HOUR = 3_600_000;
const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** The leaf type over roots that never change (one active key) and a signer of 72h leaves. */
function setup() {
  const clock = simClock();
  const cache = createAgentCache({ clock, rng: { next: () => 0.5 }, logger: silentLogger() });
  let rootReads = 0;
  const roots = caRootsType<{ roots: { Active: boolean; SigningKeyID: string }[] }>((_req, o) => {
    rootReads++;
    if (o.minIndex === 0) return Promise.resolve({ value: { roots: [{ Active: true, SigningKeyID: "AA:BB" }] }, index: 7 });
    return new Promise(() => {});
  });
  const signed: string[] = [];
  const leaf = leafCertType({
    cache, roots, clock, rng: { next: () => 0.5 },
    signingKeyIdOf: () => "aa:bb",
    async sign(req) {
      signed.push(req.service);
      const now = clock.now();
      return {
        SerialNumber: String(signed.length), CertPEM: "", PrivateKeyPEM: "", Service: req.service, ServiceURI: "",
        ValidAfter: formatRfc3339(now), ValidBefore: formatRfc3339(now + 72 * HOUR), CreateIndex: 0, ModifyIndex: 0,
      };
    },
  });
  return { clock, cache, leaf, signed, rootReads: () => rootReads };
}

describe("leaf certificate cache type", () => {
  test("leaves of several services share one roots query; a key ID differing only in case is no root change", async () => {
    const { clock, cache, leaf, signed, rootReads } = setup();
    await getLeaf(cache, leaf, "web");
    await getLeaf(cache, leaf, "api");
    await flush();
    expect(signed).toEqual(["web", "api"]);
    // The first read of the roots, then one blocking read kept open for all leaves.
    expect(rootReads()).toBe(2);
    // Roots say "AA:BB", leaves "aa:bb": the same key, so nothing is renewed within the 30 s window.
    clock.advance(HOUR);
    await flush();
    expect(signed).toHaveLength(2);
    cache.close();
  });

  test("a leaf nobody asks for is dropped after 72h and no longer renewed", async () => {
    const { clock, cache, leaf, signed } = setup();
    await getLeaf(cache, leaf, "web");
    await flush();
    clock.advance(54 * HOUR);
    await flush();
    expect(signed).toHaveLength(2);
    clock.advance(LEAF_UNUSED_TTL_MS - 54 * HOUR);
    await flush();
    // The second leaf would be due at 54h + 54h; the entry is gone by then.
    clock.advance(60 * HOUR);
    await flush();
    expect(signed).toHaveLength(2);
    const again = await getLeaf(cache, leaf, "web");
    expect(signed).toHaveLength(3);
    expect(again.cert.ModifyIndex).toBe(again.index);
    cache.close();
  });
});
