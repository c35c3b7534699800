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
  crossSignRoot, defaultCaConfiguration, generateRoot, importRoot, keySettings, namesKeySettings, newClusterId, rotateRoots, signCsr,
  trustDomain, type CAConfiguration, type CARoot, type IssuedCert, type KeySettings, type RootWithKey,
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
  /** Signs a leaf for `service` (namespace "default", this datacenter) with the active root. */
  /** Signs a CSR for `service` (its only URI SAN the service's SPIFFE ID); the cert has no private key. */
  signLeaf(service: string, csrPem: string): Promise<IssuedCert>;
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
      if (!newKey && !newKind) {
        const kept = { ...config, Config: { ...config.Config, PrivateKey: current.Config.PrivateKey, RootCert: current.Config.RootCert } };
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
      const issued = await signCsr({
        ca: { certPem: active.RootCert, keyPem: config.Config.PrivateKey, intermediateCerts: active.IntermediateCerts },
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
  };
}
