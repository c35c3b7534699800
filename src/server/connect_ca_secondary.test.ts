/**
 * A secondary datacenter's CA: it adopts the primary's roots and trust domain with an intermediate the
 * primary signs; its leaves chain to the primary's root (checked by openssl); it follows the primary's
 * rotation with a new intermediate and writes nothing when nothing changed; it refuses what only a
 * primary does.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createCertificationRequest, generateEcPrivateKey, parseCertificate, pemBlocks, pemEncode } from "../lib/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { fakeCaState } from "./connect_ca_fixtures.test.ts";
import { createConnectCa, type PrimaryRoots } from "./connect_ca.ts";


function twoDatacenters() {
  const clock = simClock();
  const p = fakeCaState();
  const s = fakeCaState();
  const primary = createConnectCa({ clock, rng: seededRng(1), logger: silentLogger(), datacenter: "dc1", primaryDatacenter: "dc1", ...p });
  const secondary = createConnectCa({ clock, rng: seededRng(2), logger: silentLogger(), datacenter: "dc2", primaryDatacenter: "dc1", ...s });
  const primaryRoots = (): PrimaryRoots => {
    const st = p.read();
    const active = st.roots.find((r) => r.Active)!;
    return { roots: st.roots, trustDomain: `${st.config!.ClusterID}.consul`, activeRootId: active.ID };
  };
  const signs: string[] = [];
  const sign = (csr: string) => (signs.push(csr), primary.signIntermediate(csr));
  return { p, s, primary, secondary, primaryRoots, sign, signs };
}

/** The simulated clock's start: certificates are checked at that time, not the machine's. */
const SIM_NOW_S = Math.floor(simClock().now() / 1000) + 3600;

/** `openssl verify` (at the simulated time) of the chain's first certificate, the rest untrusted, against `rootPem`; "OK" or openssl's complaint. */
function opensslVerify(rootPem: string, chainPem: string): string {
  const dir = mkdtempSync(join(tmpdir(), "causeway-ca2-"));
  try {
    const [leaf, ...rest] = certsOf(chainPem);
    writeFileSync(join(dir, "root.pem"), rootPem);
    writeFileSync(join(dir, "leaf.pem"), leaf!);
    writeFileSync(join(dir, "chain.pem"), rest.join("\n"));
    const r = spawnSync("openssl", ["verify", "-attime", String(SIM_NOW_S), "-CAfile", join(dir, "root.pem"), "-untrusted", join(dir, "chain.pem"), join(dir, "leaf.pem")], { encoding: "utf8" });
    return r.status === 0 ? "OK" : `${r.stdout}${r.stderr}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The certificates of a PEM chain, one PEM each. */
const certsOf = (pem: string) => pemBlocks(pem).map((b) => pemEncode(b.label, b.der));

const csrFor = async (td: string, dc: string, service: string) =>
  createCertificationRequest({ keyPem: await generateEcPrivateKey(), uris: [`spiffe://${td}/ns/default/dc/${dc}/svc/${service}`] });

describe("secondary Connect CA", () => {
  test("adopts the primary's roots and trust domain; its leaves chain to the primary's root through its intermediate", async () => {
    const { s, primary, secondary, primaryRoots, sign, signs } = twoDatacenters();
    await primary.initialize();
    // A secondary never makes a root of its own.
    await secondary.initialize();
    expect(s.proposed).toEqual([]);
    const roots = primaryRoots();
    expect(await secondary.adoptPrimaryRoots(roots, sign)).toBe(true);
    const local = s.read();
    expect(local.config!.ClusterID).toBe(roots.trustDomain.replace(/\.consul$/, ""));
    expect(local.roots.map((r) => [r.ID, r.Active])).toEqual(roots.roots.map((r) => [r.ID, r.Active]));
    const intermediate = local.config!.Config.IntermediateCert!;
    expect(local.roots.find((r) => r.Active)!.IntermediateCerts).toEqual([intermediate]);
    expect(parseCertificate(intermediate).uris).toEqual([`spiffe://${roots.trustDomain}`]);
    expect(signs).toHaveLength(1);

    // A leaf for a dc2 service: issued by the intermediate, verified against the primary's root alone.
    const leaf = await secondary.signLeaf("web", await csrFor(roots.trustDomain, "dc2", "web"));
    const activeRoot = roots.roots.find((r) => r.Active)!.RootCert;
    expect(opensslVerify(activeRoot, leaf.CertPEM)).toBe("OK");
    // The same leaf without the intermediate does not verify: the chain is what makes it work.
    expect(opensslVerify(activeRoot, certsOf(leaf.CertPEM)[0]!)).not.toBe("OK");
    // A leaf for another datacenter's service is still refused.
    await expect(secondary.signLeaf("web", await csrFor(roots.trustDomain, "dc1", "web"))).rejects.toThrow("from a different datacenter: dc1, we are dc2");

    // Nothing changed at the primary: nothing is written, nothing signed.
    expect(await secondary.adoptPrimaryRoots(primaryRoots(), sign)).toBe(false);
    expect([s.proposed.length, signs.length]).toEqual([1, 1]);
  });

  test("the primary's root rotation brings a new intermediate under the new root; the old root stays trusted", async () => {
    const { p, s, primary, secondary, primaryRoots, sign, signs } = twoDatacenters();
    await primary.initialize();
    await secondary.adoptPrimaryRoots(primaryRoots(), sign);
    await primary.setConfiguration({ ...p.read().config!, Config: { ...p.read().config!.Config, PrivateKey: undefined, RootCert: undefined, PrivateKeyType: "ec", PrivateKeyBits: 384 } });
    const rotated = primaryRoots();
    expect(rotated.roots).toHaveLength(2);
    expect(await secondary.adoptPrimaryRoots(rotated, sign)).toBe(true);
    expect(signs).toHaveLength(2);
    const local = s.read();
    expect(local.roots.map((r) => [r.ID, r.Active])).toEqual(rotated.roots.map((r) => [r.ID, r.Active]));
    const newRoot = rotated.roots.find((r) => r.Active)!;
    const leaf = await secondary.signLeaf("web", await csrFor(rotated.trustDomain, "dc2", "web"));
    expect(opensslVerify(newRoot.RootCert, leaf.CertPEM)).toBe("OK");
  });

  test("what only a primary does is refused in a secondary, and the reverse", async () => {
    const { p, primary, secondary, primaryRoots, sign } = twoDatacenters();
    await primary.initialize();
    await secondary.adoptPrimaryRoots(primaryRoots(), sign);
    const td = primaryRoots().trustDomain;
    const csr = await createCertificationRequest({ keyPem: await generateEcPrivateKey(), uris: [`spiffe://${td}`] });
    await expect(secondary.signIntermediate(csr)).rejects.toThrow("only the primary datacenter (dc1) signs intermediates");
    await expect(primary.adoptPrimaryRoots(primaryRoots(), sign)).rejects.toThrow("this is the primary datacenter");
    const config = p.read().config!;
    await expect(secondary.setConfiguration({ ...config, Config: { ...config.Config, PrivateKey: undefined, RootCert: undefined, PrivateKeyType: "rsa", PrivateKeyBits: 2048 } }))
      .rejects.toThrow("the roots of a secondary datacenter come from the primary (dc1)");
    // A primary with no active root yet: the secondary says so and writes nothing.
    const empty = twoDatacenters();
    await expect(empty.secondary.adoptPrimaryRoots({ roots: [], trustDomain: "x.consul", activeRootId: "" }, empty.sign)).rejects.toThrow("has no active CA root yet");
    expect(empty.s.proposed).toEqual([]);
  });
});
