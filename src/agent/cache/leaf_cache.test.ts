import { describe, expect, test } from "bun:test";
import { formatRfc3339, type IssuedCert } from "../../connect/index.ts";
import { silentLogger } from "../../platform/index.ts";
import { simClock } from "../../../test/harness/sim_clock.ts";
import { createLeafCache } from "./leaf_cache.ts";

const HOUR = 3_600_000;
const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A fake signer (leaves of 72h signed by the "active key") and a roots feed the test changes by hand. */
function setup() {
  const clock = simClock();
  let activeKey = "key-1";
  let rootsIndex = 5;
  let rootsWaiter: (() => void) | undefined;
  const signed: { service: string; at: number; key: string }[] = [];
  const cache = createLeafCache({
    clock,
    rng: { next: () => 0.5 },
    logger: silentLogger(),
    async sign(service) {
      const now = clock.now();
      signed.push({ service, at: now, key: activeKey });
      return {
        SerialNumber: String(signed.length), CertPEM: `cert-${signed.length}`, PrivateKeyPEM: "k", Service: service, ServiceURI: "",
        ValidAfter: formatRfc3339(now), ValidBefore: formatRfc3339(now + 72 * HOUR), CreateIndex: 0, ModifyIndex: 0,
      } satisfies IssuedCert;
    },
    signingKeyIdOf: (c) => signed[Number(c.SerialNumber) - 1]!.key,
    watchRoots: (minIndex, maxWaitMs) =>
      new Promise((resolve) => {
        if (rootsIndex > minIndex) return resolve({ index: rootsIndex, activeSigningKeyId: activeKey });
        const cancel = clock.setTimer(maxWaitMs, () => done());
        const done = () => {
          cancel();
          rootsWaiter = undefined;
          resolve({ index: rootsIndex, activeSigningKeyId: activeKey });
        };
        rootsWaiter = done;
      }),
  });
  const rotateRoot = (key: string) => {
    activeKey = key;
    rootsIndex++;
    rootsWaiter?.();
  };
  return { clock, cache, signed, rotateRoot };
}

describe("agent leaf cache", () => {
  test("signs once and serves from the cache", async () => {
    const { cache, signed } = setup();
    const a = await cache.get("web");
    const b = await cache.get("web");
    expect(b).toEqual(a);
    expect(signed).toHaveLength(1);
    expect(a.cert.ModifyIndex).toBe(a.index);
    await cache.get("api");
    expect(signed.map((s) => s.service)).toEqual(["web", "api"]);
    cache.close();
  });

  test("renews before expiry, inside 60-90% of the lifetime, and a blocking get wakes with the new leaf", async () => {
    const { clock, cache, signed } = setup();
    const first = await cache.get("web");
    const start = clock.now();
    const blocked = cache.get("web", { minIndex: first.index, maxWaitMs: 100 * HOUR });
    clock.advance(Math.floor(72 * HOUR * 0.6) - 1);
    await flush();
    expect(signed).toHaveLength(1);
    // rng 0.5: halfway through the 60-90% window, i.e. at 75% of 72h = 54h.
    clock.advance(54 * HOUR - (clock.now() - start));
    await flush();
    expect(signed).toHaveLength(2);
    const next = await blocked;
    expect(next.index).toBeGreaterThan(first.index);
    expect(next.cert.CertPEM).toBe("cert-2");
    cache.close();
  });

  test("a change of the active root renews within the 30 s jitter window", async () => {
    const { clock, cache, signed, rotateRoot } = setup();
    const first = await cache.get("web");
    await flush();
    rotateRoot("key-2");
    await flush();
    clock.advance(14_999);
    await flush();
    expect(signed).toHaveLength(1);
    clock.advance(1);
    await flush();
    expect(signed).toHaveLength(2);
    expect(signed[1]!.key).toBe("key-2");
    const now = await cache.get("web");
    expect(now.index).toBeGreaterThan(first.index);
    // The new leaf matches the active root: the next renewal is back to the expiry window.
    clock.advance(HOUR);
    await flush();
    expect(signed).toHaveLength(2);
    cache.close();
  });

  test("a blocking get times out with the same leaf; a failed signing rejects the first get", async () => {
    const { clock, cache } = setup();
    const first = await cache.get("web");
    const p = cache.get("web", { minIndex: first.index, maxWaitMs: 1000 });
    clock.advance(1000);
    expect((await p).index).toBe(first.index);
    cache.close();
    const failing = createLeafCache({
      clock, rng: { next: () => 0 }, logger: silentLogger(),
      sign: () => Promise.reject(new Error("No cluster leader")),
      watchRoots: () => new Promise(() => {}),
    });
    await expect(failing.get("web")).rejects.toThrow("No cluster leader");
    failing.close();
  });
});
