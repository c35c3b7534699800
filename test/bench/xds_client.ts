/**
 * The xDS benchmark's client process: holds many ADS streams (one @grpc/grpc-js channel, so one HTTP/2
 * connection, per stream, as every Envoy has its own) and timestamps what arrives. Each stream behaves
 * like Envoy: wildcard CDS and LDS, then EDS for every EDS cluster and RDS for every route its listeners
 * name, ACKing every response (SotW: version and nonce; delta: nonce).
 *
 * Driven by test/bench/xds.ts: JSON commands, one per stdin line; JSON events, one per stdout line.
 *   {"op":"open","variant":"sotw"|"delta","target":"host:port","ids":[...]}
 *       -> {"ev":"ready","ms":[per stream: open to full config],"failed":n,"errors":[...]}
 *   {"op":"arm","id":..,"type":typeUrl,"name":regex,"endpoint"?:"addr:port","scope"?:{"type":..,"name":..}}
 *       (before a change) -> {"ev":"armed","id":..,"affected":streams holding a resource matching scope,
 *       by default type and name}
 *   {"op":"t0","id":..,"t0":epoch ms}  (when the change was sent)
 *       -> {"ev":"done","id":..,"ms":[per affected stream: t0 to arrival],"missing":n,"cpuMs":client CPU,
 *          "messages":responses,"bytes":their size; all three counted from "armed"}
 *   {"op":"close"} -> {"ev":"closed"}
 * A watch is met for a stream when it holds a matching resource whose bytes differ from those held when
 * armed, or that it did not hold then (with `endpoint`: when a matching ClusterLoadAssignment reports that
 * endpoint UNHEALTHY).
 * With XDSBENCH_CPU_PROFILE=<dir>, the CPU of each change (from "armed" to "done") is profiled to
 * `<dir>/client-<id>.cpuprofile` (./xds_profile.ts).
 */
import { Buffer } from "node:buffer";
import { createInterface } from "node:readline";
import * as grpc from "@grpc/grpc-js";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { startWindowProfiler } from "./xds_profile.ts";
import { ClusterSchema, Cluster_DiscoveryType } from "../../src/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { HealthStatus } from "../../src/gen/envoy/config/core/v3/health_check_pb.ts";
import { ListenerSchema } from "../../src/gen/envoy/config/listener/v3/listener_pb.ts";
import { HttpConnectionManagerSchema } from "../../src/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import {
  DeltaDiscoveryRequestSchema, DeltaDiscoveryResponseSchema, DiscoveryRequestSchema, DiscoveryResponseSchema,
  type DeltaDiscoveryResponse, type DiscoveryResponse,
} from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
const RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
const SERVICE = "/envoy.service.discovery.v3.AggregatedDiscoveryService";

const now = () => performance.timeOrigin + performance.now();
const emit = (o: unknown) => void process.stdout.write(`${JSON.stringify(o)}\n`);
const sameBytes = (a: Uint8Array | undefined, b: Uint8Array | undefined) => a !== undefined && b !== undefined && Buffer.from(a).equals(Buffer.from(b));

interface Watch {
  readonly id: string;
  readonly type: string;
  readonly name: RegExp;
  readonly endpoint?: string;
  /** Per affected stream (one holding a resource matching `scope`, or `type`/`name` without it): resource name -> bytes when armed. */
  readonly baseline: Map<Stream, Map<string, Uint8Array>>;
  readonly met: Map<Stream, number>;
  t0?: number;
  /** process.cpuUsage() (user+system microseconds) and `received` when armed. */
  cpuAtT0?: number;
  receivedAtT0?: { readonly messages: number; readonly bytes: number };
}

/** Responses (and their bytes, uncompressed) received on all streams so far. */
const received = { messages: 0, bytes: 0 };

/** One proxy's stream and what it holds. */
class Stream {
  readonly held = new Map<string, Map<string, Uint8Array>>([[CDS, new Map()], [EDS, new Map()], [LDS, new Map()], [RDS, new Map()]]);
  /** Names subscribed for EDS and RDS (derived from clusters and listeners). */
  readonly subs = new Map<string, Set<string>>([[EDS, new Set()], [RDS, new Set()]]);
  readonly last = new Map<string, { version: string; nonce: string }>();
  readyAt?: number;
  failed?: string;
  private readonly client: grpc.Client;
  private readonly call: grpc.ClientDuplexStream<unknown, unknown>;

  constructor(readonly id: string, readonly variant: "sotw" | "delta", target: string, readonly onUpdate: (s: Stream, type: string) => void) {
    const Client = grpc.makeGenericClientConstructor({}, "ads");
    // A local subchannel pool: a connection of its own per stream, as each Envoy has.
    this.client = new Client(target, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1, "grpc.max_receive_message_length": 64 << 20 });
    const delta = variant === "delta";
    this.call = this.client.makeBidiStreamRequest(
      `${SERVICE}/${delta ? "DeltaAggregatedResources" : "StreamAggregatedResources"}`,
      (m: never) => Buffer.from(delta ? toBinary(DeltaDiscoveryRequestSchema, m) : toBinary(DiscoveryRequestSchema, m)),
      (b: Buffer) => {
        received.messages++;
        received.bytes += b.length;
        return delta ? fromBinary(DeltaDiscoveryResponseSchema, b) : fromBinary(DiscoveryResponseSchema, b);
      },
    ) as grpc.ClientDuplexStream<unknown, unknown>;
    this.call.on("error", (e: Error) => (this.failed ??= e.message));
    this.call.on("data", (m: DiscoveryResponse | DeltaDiscoveryResponse) => this.onResponse(m));
    const node = { id, cluster: id.replace(/-sidecar-proxy$/, "").replace(/-\d+$/, "") };
    this.send(CDS, { node });
    this.send(LDS, {});
  }

  private send(typeUrl: string, extra: Record<string, unknown>): void {
    if (this.variant === "delta") this.call.write(create(DeltaDiscoveryRequestSchema, { typeUrl, ...extra }));
    else this.call.write(create(DiscoveryRequestSchema, { typeUrl, ...extra }));
  }

  private onResponse(m: DiscoveryResponse | DeltaDiscoveryResponse): void {
    const type = m.typeUrl;
    const held = this.held.get(type);
    if (!held) return;
    if (m.$typeName === "envoy.service.discovery.v3.DiscoveryResponse") {
      held.clear();
      for (const a of m.resources) held.set(nameOf(a.value), a.value);
      this.last.set(type, { version: m.versionInfo, nonce: m.nonce });
      this.send(type, { versionInfo: m.versionInfo, responseNonce: m.nonce, resourceNames: [...(this.subs.get(type) ?? [])] });
    } else {
      for (const r of m.resources) if (r.resource) held.set(r.name, r.resource.value);
      for (const n of m.removedResources) held.delete(n);
      this.send(type, { responseNonce: m.nonce });
    }
    if (type === CDS) this.resubscribe(EDS, edsNames(held));
    if (type === LDS) this.resubscribe(RDS, rdsNames(held));
    if (this.readyAt === undefined && this.complete()) this.readyAt = now();
    this.onUpdate(this, type);
  }

  private resubscribe(type: string, names: Set<string>): void {
    const cur = this.subs.get(type)!;
    if (names.size === cur.size && [...names].every((n) => cur.has(n))) return;
    if (this.variant === "delta") {
      const add = [...names].filter((n) => !cur.has(n));
      const drop = [...cur].filter((n) => !names.has(n));
      this.send(type, { resourceNamesSubscribe: add, resourceNamesUnsubscribe: drop });
    } else {
      const l = this.last.get(type);
      this.send(type, { resourceNames: [...names], ...(l ? { versionInfo: l.version, responseNonce: l.nonce } : {}) });
    }
    this.subs.set(type, names);
  }

  /** Clusters and listeners arrived, and every subscribed EDS and RDS name is held. */
  complete(): boolean {
    if (this.held.get(CDS)!.size === 0 || this.held.get(LDS)!.size === 0) return false;
    for (const t of [EDS, RDS]) for (const n of this.subs.get(t)!) if (!this.held.get(t)!.has(n)) return false;
    return true;
  }

  close(): void {
    this.call.cancel();
    this.client.close();
  }
}

/**
 * Calls `f` for each field of the serialized message `bytes`; `f` reads the field's value from the
 * reader and returns true, or returns false to have it skipped. Lets the client look at the few fields
 * it checks without decoding whole resources: a SotW response carries every resource of its type, and
 * decoding each one in full was most of this process's CPU, which it shares with the agent.
 */
function eachField(bytes: Uint8Array, f: (no: number, wireType: WireType, r: BinaryReader) => boolean): void {
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [no, wireType] = r.tag();
    if (!f(no, wireType, r)) r.skip(wireType, no);
  }
}

/** The length-delimited fields numbered `no` of a message (sub-messages), as views of `bytes`. */
function submessages(bytes: Uint8Array, no: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  eachField(bytes, (n, wireType, r) => n === no && wireType === WireType.LengthDelimited && out.push(r.bytes()) > 0);
  return out;
}

/** The name of a Cluster, ClusterLoadAssignment, Listener or RouteConfiguration: field 1 of each (`name`, `cluster_name`). */
function nameOf(bytes: Uint8Array): string {
  let name = "";
  eachField(bytes, (no, wireType, r) => {
    if (no !== 1 || wireType !== WireType.LengthDelimited) return false;
    name = r.string();
    return true;
  });
  return name;
}

function edsNames(clusters: Map<string, Uint8Array>): Set<string> {
  const out = new Set<string>();
  for (const bytes of clusters.values()) {
    const c = fromBinary(ClusterSchema, bytes);
    if (c.clusterDiscoveryType.case === "type" && c.clusterDiscoveryType.value === Cluster_DiscoveryType.EDS) out.add(c.edsClusterConfig?.serviceName || c.name);
  }
  return out;
}

function rdsNames(listeners: Map<string, Uint8Array>): Set<string> {
  const out = new Set<string>();
  for (const bytes of listeners.values()) {
    for (const chain of fromBinary(ListenerSchema, bytes).filterChains) {
      for (const f of chain.filters) {
        if (f.configType.case !== "typedConfig" || !f.configType.value.typeUrl.endsWith("HttpConnectionManager")) continue;
        const hcm = anyUnpack(f.configType.value, HttpConnectionManagerSchema);
        if (hcm?.routeSpecifier.case === "rds") out.add(hcm.routeSpecifier.value.routeConfigName);
      }
    }
  }
  return out;
}

/** "address:port" of an Endpoint's address(1).socket_address(1) {address(2), port_value(3)}, if it has one. */
function socketAddressOf(endpoint: Uint8Array): string | undefined {
  const address = submessages(endpoint, 1)[0];
  const socket = address && submessages(address, 1)[0];
  if (!socket) return undefined;
  let host = "";
  let port: number | undefined;
  eachField(socket, (no, wireType, r) => {
    if (no === 2 && wireType === WireType.LengthDelimited) host = r.string();
    else if (no === 3 && wireType === WireType.Varint) port = r.uint32();
    else return false;
    return true;
  });
  return port === undefined ? undefined : `${host}:${port}`;
}

/**
 * Whether the ClusterLoadAssignment reports `endpoint` ("address:port") UNHEALTHY: its
 * endpoints(2).lb_endpoints(2), each an LbEndpoint with endpoint(1) and health_status(2).
 */
function endpointUnhealthy(bytes: Uint8Array, endpoint: string): boolean {
  for (const locality of submessages(bytes, 2)) {
    for (const lb of submessages(locality, 2)) {
      const seen: { health: HealthStatus; at?: string } = { health: HealthStatus.UNKNOWN };
      eachField(lb, (no, wireType, r) => {
        if (no === 2 && wireType === WireType.Varint) seen.health = r.int32();
        else if (no === 1 && wireType === WireType.LengthDelimited) seen.at = socketAddressOf(r.bytes());
        else return false;
        return true;
      });
      if (seen.at === endpoint) return seen.health === HealthStatus.UNHEALTHY;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------
// Commands

let streams: Stream[] = [];
const watches = new Map<string, Watch>();
let opening: { started: number; pending: Set<Stream> } | undefined;

function watchMet(w: Watch, s: Stream): boolean {
  const base = w.baseline.get(s)!;
  for (const [name, bytes] of s.held.get(w.type)!) {
    if (!w.name.test(name)) continue;
    if (w.endpoint !== undefined ? endpointUnhealthy(bytes, w.endpoint) : !sameBytes(bytes, base.get(name))) return true;
  }
  return false;
}

const cpuUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

function finishWatch(w: Watch): void {
  if (w.t0 === undefined || w.met.size < w.baseline.size) return;
  watches.delete(w.id);
  reportDone(w, 0);
}

/** Emits the watch's result, with the client's own CPU from t0 to now (to tell whether it is the bottleneck). */
function reportDone(w: Watch, missing: number): void {
  const cpuMs = (cpuUs() - (w.cpuAtT0 ?? 0)) / 1000;
  void profiler?.cut(w.id);
  const messages = received.messages - (w.receivedAtT0?.messages ?? 0);
  const bytes = received.bytes - (w.receivedAtT0?.bytes ?? 0);
  emit({ ev: "done", id: w.id, ms: [...w.met.values()].map((t) => t - w.t0!), missing, cpuMs, messages, bytes });
}

function onUpdate(s: Stream, type: string): void {
  if (opening?.pending.has(s) && s.readyAt !== undefined) {
    opening.pending.delete(s);
    if (opening.pending.size === 0) reportReady();
  }
  for (const w of watches.values()) {
    if (w.type !== type || !w.baseline.has(s) || w.met.has(s)) continue;
    if (watchMet(w, s)) {
      w.met.set(s, now());
      finishWatch(w);
    }
  }
}

function reportReady(): void {
  if (!opening) return;
  const o = opening;
  opening = undefined;
  const failed = streams.filter((s) => s.failed !== undefined);
  emit({ ev: "ready", ms: streams.filter((s) => s.readyAt !== undefined).map((s) => s.readyAt! - o.started), failed: failed.length, errors: [...new Set(failed.map((s) => s.failed))].slice(0, 5) });
}

type Command =
  | { op: "open"; variant: "sotw" | "delta"; target: string; ids: string[]; timeoutMs: number }
  | { op: "arm"; id: string; type: string; name: string; endpoint?: string; scope?: { type: string; name: string } }
  | { op: "t0"; id: string; t0: number; timeoutMs: number }
  | { op: "close" };

function handle(c: Command): void {
  switch (c.op) {
    case "open": {
      opening = { started: now(), pending: new Set() };
      streams = c.ids.map((id) => new Stream(id, c.variant, c.target, onUpdate));
      for (const s of streams) opening.pending.add(s);
      // Streams that fail (or never complete) are reported at the deadline instead of hanging the run.
      setTimeout(reportReady, c.timeoutMs);
      return;
    }
    case "arm": {
      const w: Watch = { id: c.id, type: c.type, name: new RegExp(c.name), endpoint: c.endpoint, baseline: new Map(), met: new Map() };
      const scope = c.scope ? { type: c.scope.type, name: new RegExp(c.scope.name) } : { type: c.type, name: w.name };
      for (const s of streams) {
        if (![...s.held.get(scope.type)!.keys()].some((n) => scope.name.test(n))) continue;
        w.baseline.set(s, new Map([...s.held.get(c.type)!].filter(([n]) => w.name.test(n))));
      }
      watches.set(c.id, w);
      w.cpuAtT0 = cpuUs(); // the change is sent after "armed": from here, client CPU counts toward it
      w.receivedAtT0 = { ...received };
      void profiler?.cut(`pre-${c.id}`);
      emit({ ev: "armed", id: c.id, affected: w.baseline.size });
      return;
    }
    case "t0": {
      const w = watches.get(c.id);
      if (!w) return;
      w.t0 = c.t0;
      finishWatch(w);
      setTimeout(() => {
        if (!watches.has(c.id)) return;
        watches.delete(c.id);
        reportDone(w, w.baseline.size - w.met.size);
      }, c.timeoutMs);
      return;
    }
    case "close":
      for (const s of streams) s.close();
      streams = [];
      emit({ ev: "closed" });
      return;
  }
}

const profiler = import.meta.main ? await startWindowProfiler(process.env.XDSBENCH_CPU_PROFILE, "client") : undefined;

if (import.meta.main) {
  const rl = createInterface({ input: process.stdin });
  rl.on("line", (line) => {
    if (line.trim() !== "") handle(JSON.parse(line) as Command);
  });
  rl.on("close", () => {
    for (const s of streams) s.close();
    process.exit(0);
  });
}
