/**
 * The server's Connect CA duties over the replicated state (built-in "consul" provider, Consul 1.8):
 * the leader initialises the CA on first leadership (`initializeCA` in agent/consul/leader_connect.go),
 * the leader applies configuration changes and rotates the root when the key changes
 * (`ConnectCA.ConfigurationSet` in agent/consul/connect_ca_endpoint.go), and any server signs leaves
 * with the active root (`ConnectCA.Sign`).
 *
 * The state keeps the roots (without keys) and the CA configuration; the configuration's
 * `Config.PrivateKey` / `Config.RootCert` always hold the active root's key and certificate, so every
 * server can sign from its own copy of the log. Reads of the configuration redact the key.
 */
import {
  createIntermediateCsr, crossSignRoot, DEFAULT_INTERMEDIATE_CERT_TTL, defaultCaConfiguration, generateRoot, importRoot, keySettings, namesKeySettings,
  newClusterId, rotateRoots, signCsr, signIntermediateCsr, TRUST_DOMAIN_SUFFIX, trustDomain, type CAConfiguration, type CARoot, type IssuedCert,
  type KeySettings, type RootWithKey,
} from "../connect/index.ts";
import { parseDuration } from "../lib/index.ts";
import type { Clock, Logger, Rng } from "../platform/index.ts";
import type { StateCommand, StateResult } from "../state/index.ts";

/** The CA part of the state as one server has it now. */
export interface CaSnapshot {
  /** The roots table's index (0 before any roots exist): the CAS index of `set-roots`. */
  readonly index: number;
  readonly roots: readonly CARoot[];
  /** The stored configuration, private key included; null before the CA exists. */
  readonly config: CAConfiguration | null;
}

/** What the CA logic needs from the server. */
export interface ConnectCaDeps {
  readonly clock: Clock;
  /** Cluster IDs, serial numbers (cryptoRng in production). */
  readonly rng: Rng;
  readonly logger: Logger;
  /** This server's datacenter: leaves are signed for service IDs in it only. */
  readonly datacenter: string;
  /**
   * The primary datacenter (`primary_datacenter`); absent or equal to `datacenter` in a primary. A
   * secondary never creates a root of its own: its leader adopts the primary's roots with an
   * intermediate the primary signs (see adoptPrimaryRoots).
   */
  readonly primaryDatacenter?: string;
  /** The CA state in the local store now. */
  read(): CaSnapshot;
  /** Resolves once everything committed before the call is applied locally (a leader's barrier). */
  barrier(): Promise<void>;
  /** Proposes a command through Raft and resolves with its result once applied here. */
  propose(command: StateCommand): Promise<StateResult>;
}

/** The CA operations of a server. Errors reject with a message meant for the API client. */
export interface ConnectCa {
  /**
   * On the leader: creates the cluster ID and the first root when the state has none (one `set-roots`
   * proposal with the configuration); does nothing when an active root exists.
   */
  initialize(): Promise<void>;
  /**
   * On the leader: applies a new configuration. The cluster ID and the provider cannot change;
   * `PrivateKeyType`/`PrivateKeyBits` are checked like Consul's `CommonCAProviderConfig.Validate`. A
   * `PrivateKey` (optionally with `RootCert`) other than the active one rotates the root to it (its
   * type and size are the key's); without a key, a `PrivateKeyType`/`PrivateKeyBits` that differs from
   * the active root's rotates to a freshly generated key of that kind. On rotation the new root is
   * cross-signed by the old key (any EC/RSA combination), the old root stays in the list inactive, and
   * roots and config are written together (CAS on the roots index). Otherwise only the configuration is
   * written, keeping the active key. Refusals of the configuration itself start with
   * "error configuring provider: " and propose nothing.
   */
  setConfiguration(config: CAConfiguration): Promise<void>;
  /**
   * Signs a CSR for `service` (its only URI SAN the service's SPIFFE ID); the cert has no private key.
   * In a secondary the issuer is this datacenter's intermediate, and CertPEM carries it.
   */
  signLeaf(service: string, csrPem: string): Promise<IssuedCert>;
  /**
   * In a primary datacenter: signs a secondary's intermediate CSR with the active root (Consul's
   * ConnectCA.SignIntermediate); validity IntermediateCertTTL, never past the root's. A secondary refuses.
   */
  signIntermediate(csrPem: string): Promise<string>;
  /**
   * In a secondary, on its leader: makes this datacenter's CA the primary's (Consul's
   * initializeSecondaryCA): the primary's roots, trust domain and cluster ID, and an intermediate key
   * whose certificate `sign` obtains from the primary. A new intermediate only when the primary's
   * active root changed (or there is none yet); otherwise only the roots list follows the primary's.
   * Returns whether it wrote anything.
   */
  adoptPrimaryRoots(primary: PrimaryRoots, sign: (csrPem: string) => Promise<string>): Promise<boolean>;
}

/** The primary datacenter's CA as its `ca-roots` read shows it. */
export interface PrimaryRoots {
  readonly roots: readonly CARoot[];
  readonly trustDomain: string;
  readonly activeRootId: string;
}

/** Parses a Go duration field of the provider config; throws `Invalid <name>: ...`. */
export function caDurationMs(text: string | undefined, name: string, fallback: string): number {
  const raw = text === undefined || text === "" ? fallback : text;
  let ms: number;
  try {
    ms = parseDuration(raw);
  } catch {
    throw new Error(`Invalid ${name}: time: invalid duration ${JSON.stringify(raw)}`);
  }
  if (!(ms > 0)) throw new Error(`Invalid ${name}: must be positive`);
  return ms;
}

/** Consul's text for a RootCert given without its PrivateKey (`ParseConsulCAConfig`). */
const NEEDS_KEY = "must provide a private key when providing a root cert";

/** Runs a check of the requested configuration; its Error becomes Consul's "error configuring provider: ..." refusal. */
async function refusal<T>(check: () => T | Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    throw new Error(`error configuring provider: ${(err as Error).message}`);
  }
}

/** A positive serial below 2^52 (a safe integer), for roots and cross-signed certificates. */
function safeSerial(rng: Rng): number {
  const b = rng.bytes(7);
  let n = 0;
  for (const x of b) n = n * 256 + x;
  return (n % 2 ** 52) + 1;
}

/** A positive random 64-bit serial for leaves. */
function leafSerial(rng: Rng): bigint {
  const b = rng.bytes(8);
  let n = 0n;
  for (const x of b) n = (n << 8n) | BigInt(x);
  return n === 0n ? 1n : n;
}

export function createConnectCa(d: ConnectCaDeps): ConnectCa {
  const log = d.logger;
  const secondary = !!d.primaryDatacenter && d.primaryDatacenter !== d.datacenter;
  const activeOf = (roots: readonly CARoot[]) => roots.find((r) => r.Active);

  /** The root a configuration asks for: its own key/cert, or a fresh key of its PrivateKeyType/Bits when it names none. */
  const rootFor = async (config: CAConfiguration, key: KeySettings): Promise<RootWithKey> => {
    const { PrivateKey: pk, RootCert: cert } = config.Config;
    if (cert && !pk) throw new Error(NEEDS_KEY);
    if (pk && cert) return importRoot({ rootCertPem: cert, privateKeyPem: pk, clusterId: config.ClusterID });
    return generateRoot({ clusterId: config.ClusterID, now: d.clock.now(), serial: safeSerial(d.rng), privateKeyPem: pk || undefined, key });
  };
  const withKey = (config: CAConfiguration, r: RootWithKey): CAConfiguration => ({
    ...config,
    Config: { ...config.Config, PrivateKey: r.privateKeyPem, RootCert: r.root.RootCert },
  });
  const expectCas = (r: StateResult, what: string) => {
    if (r.type === "error") throw new Error(r.error);
    if (r.type === "cas" && !r.ok) throw new Error(`could not atomically update roots and config (${what})`);
  };

  return {
    async initialize() {
      // A secondary's CA is the primary's: adoptPrimaryRoots (its own leader routine) sets it up.
      if (secondary) return;
      await d.barrier();
      const now = d.read();
      if (activeOf(now.roots) && now.config?.Config.PrivateKey) return;
      const config = now.config ?? defaultCaConfiguration(newClusterId(d.rng));
      caDurationMs(config.Config.LeafCertTTL, "LeafCertTTL", "72h");
      const root = await rootFor(config, keySettings(config.Config.PrivateKeyType, config.Config.PrivateKeyBits));
      const roots = now.roots.length ? rotateRoots(now.roots, root.root) : [root.root];
      const r = await d.propose({ type: "ca", op: "set-roots", roots, config: withKey(config, root), index: now.index });
      expectCas(r, "initializing the CA");
      log.info("initialized the Connect CA", { trust_domain: trustDomain(config.ClusterID), root: root.root.ID });
    },

    async setConfiguration(requested) {
      if (requested.Provider !== undefined && requested.Provider !== "consul") {
        throw new Error(`could not initialize provider: unknown CA provider "${String(requested.Provider)}"`);
      }
      caDurationMs(requested.Config.LeafCertTTL, "LeafCertTTL", "72h");
      const wanted = await refusal(() => keySettings(requested.Config.PrivateKeyType, requested.Config.PrivateKeyBits));
      await d.barrier();
      const now = d.read();
      const current = now.config;
      const active = activeOf(now.roots);
      if (!current || !active || !current.Config.PrivateKey) throw new Error("internal error: CA provider is nil (the CA is not initialised yet)");
      // Consul: "Don't allow users to change the ClusterID."
      const config: CAConfiguration = { ...requested, Provider: "consul", ClusterID: current.ClusterID };
      const key = config.Config.PrivateKey;
      const cert = config.Config.RootCert;
      // GET answers RootCert but never PrivateKey, so a read-modify-write PUT carries the active RootCert alone.
      if (cert && !key && cert !== current.Config.RootCert) throw new Error(`error configuring provider: ${NEEDS_KEY}`);
      const newKey = !!key && !(key === current.Config.PrivateKey && (!cert || cert === current.Config.RootCert));
      const newKind = !key && namesKeySettings(config.Config) && (wanted.type !== active.PrivateKeyType || wanted.bits !== active.PrivateKeyBits);
      if (secondary && (newKey || newKind)) {
        throw new Error(`error configuring provider: the roots of a secondary datacenter come from the primary (${d.primaryDatacenter}); rotate them there`);
      }
      if (!newKey && !newKind) {
        const intermediate = current.Config.IntermediateCert === undefined ? {} : { IntermediateCert: current.Config.IntermediateCert };
        const kept = { ...config, Config: { ...config.Config, PrivateKey: current.Config.PrivateKey, RootCert: current.Config.RootCert, ...intermediate } };
        const r = await d.propose({ type: "ca", op: "set-config", config: kept });
        if (r.type === "error") throw new Error(r.error);
        log.info("CA provider config updated");
        return;
      }
      // A new kind of key: generate one (a RootCert in the request is the active one, see above).
      const source = newKind ? { ...config, Config: { ...config.Config, RootCert: undefined } } : config;
      const next = await refusal(() => rootFor(source, wanted));
      if (next.root.ID === active.ID) {
        const r = await d.propose({ type: "ca", op: "set-config", config: withKey(config, next) });
        if (r.type === "error") throw new Error(r.error);
        return;
      }
      const crossSigned = await crossSignRoot({
        newRootCertPem: next.root.RootCert,
        oldRootCertPem: active.RootCert,
        oldRootKeyPem: current.Config.PrivateKey,
        now: d.clock.now(),
        serial: safeSerial(d.rng),
      });
      const roots = rotateRoots(now.roots, next.root, crossSigned);
      const r = await d.propose({ type: "ca", op: "set-roots", roots, config: withKey(config, next), index: now.index });
      expectCas(r, "rotating the root");
      log.info("CA rotated to a new root", { provider: "consul", root: next.root.ID });
    },

    async signLeaf(service, csrPem) {
      if (!service) throw new Error("service name is required");
      const now = d.read();
      const active = activeOf(now.roots);
      const config = now.config;
      if (!active || !config?.Config.PrivateKey) throw new Error("internal error: CA root is nil (the CA is not initialised yet)");
      // Consul's ConnectCA.Sign: the CSR's SPIFFE ID must name this trust domain and datacenter, and
      // here also the service the agent asked for.
      // In a secondary the intermediate issues (the active root's IntermediateCerts start with it).
      const issuer = config.Config.IntermediateCert || active.RootCert;
      const issued = await signCsr({
        ca: { certPem: issuer, keyPem: config.Config.PrivateKey, intermediateCerts: active.IntermediateCerts },
        trustDomain: trustDomain(config.ClusterID),
        datacenter: d.datacenter,
        now: d.clock.now(),
        ttlMs: caDurationMs(config.Config.LeafCertTTL, "LeafCertTTL", "72h"),
        serial: leafSerial(d.rng),
        csrPem,
      });
      if (issued.Service !== service) throw new Error(`CSR is for service ${JSON.stringify(issued.Service)}, not ${JSON.stringify(service)}`);
      return { ...issued, CreateIndex: now.index, ModifyIndex: now.index };
    },

    async signIntermediate(csrPem) {
      if (secondary) throw new Error(`only the primary datacenter (${d.primaryDatacenter}) signs intermediates`);
      const now = d.read();
      const active = activeOf(now.roots);
      const config = now.config;
      if (!active || !config?.Config.PrivateKey) throw new Error("internal error: CA root is nil (the CA is not initialised yet)");
      return signIntermediateCsr({
        rootCertPem: active.RootCert,
        rootKeyPem: config.Config.PrivateKey,
        csrPem,
        trustDomain: trustDomain(config.ClusterID),
        now: d.clock.now(),
        ttlMs: caDurationMs(config.Config.IntermediateCertTTL, "IntermediateCertTTL", DEFAULT_INTERMEDIATE_CERT_TTL),
        serial: leafSerial(d.rng),
      });
    },

    async adoptPrimaryRoots(primary, sign) {
      if (!secondary) throw new Error("adoptPrimaryRoots: this is the primary datacenter");
      const active = primary.roots.find((r) => r.ID === primary.activeRootId && r.Active);
      if (!active) throw new Error(`the primary datacenter (${d.primaryDatacenter}) has no active CA root yet`);
      const suffix = `.${TRUST_DOMAIN_SUFFIX}`;
      if (!primary.trustDomain.endsWith(suffix)) throw new Error(`the primary's trust domain ${JSON.stringify(primary.trustDomain)} does not end in ${suffix}`);
      const clusterId = primary.trustDomain.slice(0, -suffix.length);
      await d.barrier();
      const now = d.read();
      const current = now.config;
      const localActive = activeOf(now.roots);
      const haveIntermediate = !!current?.Config.IntermediateCert && !!current.Config.PrivateKey && current.ClusterID === clusterId && localActive?.ID === active.ID;
      // The roots as the primary has them, the active one carrying this datacenter's intermediate first.
      const rootsWith = (intermediate: string) =>
        primary.roots.map((r) => (r.ID === active.ID ? { ...r, IntermediateCerts: [intermediate, ...r.IntermediateCerts.filter((c) => c !== intermediate)] } : { ...r }));
      if (haveIntermediate) {
        const wanted = rootsWith(current!.Config.IntermediateCert!);
        const same = wanted.length === now.roots.length && wanted.every((r, i) => {
          const l = now.roots[i]!;
          return l.ID === r.ID && l.Active === r.Active && l.IntermediateCerts.join() === r.IntermediateCerts.join();
        });
        if (same) return false;
        const r = await d.propose({ type: "ca", op: "set-roots", roots: wanted, config: current!, index: now.index });
        expectCas(r, "following the primary's roots");
        return true;
      }
      const { keyPem, csrPem } = await createIntermediateCsr({ trustDomain: primary.trustDomain, datacenter: d.datacenter });
      const intermediate = await sign(csrPem);
      const base = current ?? defaultCaConfiguration(clusterId);
      const config: CAConfiguration = {
        ...base,
        ClusterID: clusterId,
        Provider: "consul",
        Config: { ...base.Config, PrivateKey: keyPem, RootCert: active.RootCert, IntermediateCert: intermediate },
      };
      const r = await d.propose({ type: "ca", op: "set-roots", roots: rootsWith(intermediate), config, index: now.index });
      expectCas(r, "adopting the primary's CA");
      log.info("secondary CA: the primary signed this datacenter's intermediate", { trust_domain: primary.trustDomain, root: active.ID });
      return true;
    },
  };
}
