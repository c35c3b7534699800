import { describe, expect, test } from "bun:test";
import { leafSigningKeyId, parseSpiffeId, type CAConfiguration, type CARoot } from "../connect/index.ts";
import { createCertificationRequest, generateEcPrivateKey, parseCertificate } from "../lib/index.ts";
import { seededRng, silentLogger } from "../platform/index.ts";
import type { StateCommand, StateResult } from "../state/index.ts";
import { simClock } from "../../test/harness/sim_clock.ts";
import { createConnectCa, type CaSnapshot } from "./connect_ca.ts";

/** A CSR as the agent makes it: a fresh key, the service's SPIFFE ID as the only URI SAN. */
async function csrFor(service: string, clusterId = "00000000-0000-0000-0000-000000000000", dc = "dc1"): Promise<string> {
  return createCertificationRequest({ keyPem: await generateEcPrivateKey(), uris: [`spiffe://${clusterId}.consul/ns/default/dc/${dc}/svc/${service}`] });
}

/** An in-memory CA state with the store's set-roots (CAS) and set-config semantics. */
function fakeCaState() {
  let state: CaSnapshot = { index: 0, roots: [], config: null };
  let raft = 10;
  const proposed: StateCommand[] = [];
  const propose = async (cmd: StateCommand): Promise<StateResult> => {
    proposed.push(cmd);
    raft++;
    if (cmd.type !== "ca") throw new Error("unexpected command");
    if (cmd.op === "set-config") {
      state = { ...state, config: { ...cmd.config, ModifyIndex: raft } };
      return { type: "ok" };
    }
    if (cmd.op !== "set-roots") throw new Error("unexpected op");
    if (cmd.index !== state.index) return { type: "cas", ok: false };
    const roots: CARoot[] = cmd.roots.map((r) => ({ ...r, ModifyIndex: raft }));
    state = { index: raft, roots, config: cmd.config ? { ...cmd.config, ModifyIndex: raft } : state.config };
    return { type: "cas", ok: true };
  };
  return { read: () => state, propose, proposed, barrier: async () => {} };
}

function setup() {
  const s = fakeCaState();
  const ca = createConnectCa({ clock: simClock(), rng: seededRng(7), logger: silentLogger(), datacenter: "dc1", ...s });
  return { s, ca };
}

describe("leader CA initialisation", () => {
  test("with no CA, proposes one set-roots with a new cluster ID, one active root and the config holding its key", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    expect(s.proposed).toHaveLength(1);
    const cmd = s.proposed[0] as Extract<StateCommand, { type: "ca"; op: "set-roots" }>;
    expect(cmd.op).toBe("set-roots");
    expect(cmd.index).toBe(0);
    expect(cmd.roots).toHaveLength(1);
    const root = cmd.roots[0]!;
    expect(root.Active).toBe(true);
    const config = cmd.config as CAConfiguration;
    expect(config.ClusterID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(config.Config.PrivateKey).toContain("PRIVATE KEY");
    expect(parseCertificate(root.RootCert).uris).toEqual([`spiffe://${config.ClusterID}.consul`]);
    // Leadership again (or a second leader): nothing to do.
    await ca.initialize();
    expect(s.proposed).toHaveLength(1);
  });

  test("signLeaf signs with the active root for this datacenter with the configured TTL", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const td = s.read().config!.ClusterID;
    const cert = await ca.signLeaf("web", await csrFor("web", td));
    const id = parseSpiffeId(cert.ServiceURI);
    expect(id).toMatchObject({ kind: "service", service: "web", datacenter: "dc1", namespace: "default" });
    expect(Date.parse(cert.ValidBefore) - Date.parse(cert.ValidAfter)).toBe(72 * 3_600_000);
    expect(leafSigningKeyId(cert.CertPEM)).toBe(s.read().roots[0]!.SigningKeyID);
    expect(cert.PrivateKeyPEM).toBe(""); // the key stays with the agent that made the CSR
    const other = await ca.signLeaf("web", await csrFor("web", td));
    // A CSR for another service, trust domain or datacenter is refused.
    await expect(ca.signLeaf("web", await csrFor("db", td))).rejects.toThrow(/not "web"/);
    await expect(ca.signLeaf("web", await csrFor("web"))).rejects.toThrow(/different trust domain/);
    await expect(ca.signLeaf("web", await csrFor("web", td, "dc2"))).rejects.toThrow(/different datacenter/);
    expect(other.SerialNumber).not.toBe(cert.SerialNumber);
  });

  test("signLeaf before the CA exists rejects", async () => {
    const { ca } = setup();
    await expect(ca.signLeaf("web", await csrFor("web"))).rejects.toThrow(/not initialised/);
  });
});

describe("CA configuration", () => {
  test("a change without a new key only sets the config, keeping the key and cluster ID", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const before = s.read();
    await ca.setConfiguration({
      ClusterID: "ignored", Provider: "consul", CreateIndex: 0, ModifyIndex: 0,
      Config: { LeafCertTTL: "24h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h" },
    });
    expect(s.proposed.map((c) => (c as { op: string }).op)).toEqual(["set-roots", "set-config"]);
    const after = s.read();
    expect(after.config!.ClusterID).toBe(before.config!.ClusterID);
    expect(after.config!.Config.PrivateKey).toBe(before.config!.Config.PrivateKey);
    expect(after.config!.Config.LeafCertTTL).toBe("24h");
    const leaf = await ca.signLeaf("api", await csrFor("api", s.read().config!.ClusterID));
    expect(Date.parse(leaf.ValidBefore) - Date.parse(leaf.ValidAfter)).toBe(24 * 3_600_000);
  });

  test("a new root rotates: the old root stays inactive, the new one is active with a cross-signed cert", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const old = s.read();
    const oldRoot = old.roots[0]!;
    // A second CA's key and root, as an operator would supply.
    const other = setup();
    await other.ca.initialize();
    const supplied = other.s.read();
    await ca.setConfiguration({
      ...old.config!, ClusterID: "",
      Config: { ...old.config!.Config, PrivateKey: supplied.config!.Config.PrivateKey, RootCert: supplied.roots[0]!.RootCert },
    });
    expect(s.proposed).toHaveLength(2);
    const now = s.read();
    expect(now.roots).toHaveLength(2);
    const inactive = now.roots.find((r) => r.ID === oldRoot.ID)!;
    const active = now.roots.find((r) => r.Active)!;
    expect(inactive.Active).toBe(false);
    expect(active.ID).toBe(supplied.roots[0]!.ID);
    expect(active.IntermediateCerts).toHaveLength(1);
    const xc = parseCertificate(active.IntermediateCerts[0]!);
    expect(xc.authorityKeyIdHex.replace(/(..)(?!$)/g, "$1:")).toBe(oldRoot.SigningKeyID);
    expect(now.config!.ClusterID).toBe(old.config!.ClusterID);
    expect(now.config!.Config.PrivateKey).toBe(supplied.config!.Config.PrivateKey);
    // New leaves come from the new key and carry the cross-signed certificate.
    const leaf = await ca.signLeaf("web", await csrFor("web", s.read().config!.ClusterID));
    expect(leafSigningKeyId(leaf.CertPEM)).toBe(active.SigningKeyID);
    expect(leaf.CertPEM.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
  });

  test("a key alone rotates to a root generated from it; a RootCert without a key is refused", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const other = setup();
    await other.ca.initialize();
    const cfg = s.read().config!;
    await expect(ca.setConfiguration({ ...cfg, Config: { ...cfg.Config, PrivateKey: "", RootCert: other.s.read().roots[0]!.RootCert } }))
      .rejects.toThrow(/RootCert requires PrivateKey/);
    await ca.setConfiguration({ ...cfg, Config: { LeafCertTTL: "72h", RotationPeriod: "2160h", IntermediateCertTTL: "8760h", PrivateKey: other.s.read().config!.Config.PrivateKey } });
    const roots = s.read().roots;
    expect(roots.filter((r) => r.Active)).toHaveLength(1);
    expect(roots.find((r) => r.Active)!.SigningKeyID).toBe(other.s.read().roots[0]!.SigningKeyID);
  });

  test("a non-consul provider and a bad LeafCertTTL are refused before anything is proposed", async () => {
    const { s, ca } = setup();
    await ca.initialize();
    const cfg = s.read().config!;
    await expect(ca.setConfiguration({ ...cfg, Provider: "vault" as "consul" })).rejects.toThrow(/unknown CA provider/);
    await expect(ca.setConfiguration({ ...cfg, Config: { ...cfg.Config, LeafCertTTL: "soon" } })).rejects.toThrow(/Invalid LeafCertTTL/);
    expect(s.proposed).toHaveLength(1);
  });
});
