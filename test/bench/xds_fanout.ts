/**
 * Micro-benchmark of the ADS stream side of one change, without processes, sockets or ConnectRPC: for
 * the scenario of test/bench/xds_render.ts (1,000 sidecars, 10 upstreams each), one SotW or delta stream
 * state machine per proxy (src/xds/protocol), driven like Envoy (wildcard CDS and LDS, then EDS and RDS
 * for every name the node has, every response ACKed). After each change every stream takes the new
 * snapshot, and each response is serialized with `toBinary` as ConnectRPC would.
 *
 *   bun run test/bench/xds_fanout.ts [--proxies 1000] [--rounds 3] [--variant sotw|delta]
 *
 * Prints, per change, the CPU ms per proxy update of publishing (cache.set, as xds_render.ts) and of
 * the streams (state machine + serialization), the responses sent and their bytes, and a digest of all
 * response bytes (with nonces), which must not change when the stream side gets faster.
 */
import { createHash } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import {
  DeltaDiscoveryRequestSchema, DeltaDiscoveryResponseSchema, DiscoveryRequestSchema, DiscoveryResponseSchema,
  type DeltaDiscoveryRequest, type DeltaDiscoveryResponse, type DiscoveryRequest, type DiscoveryResponse,
} from "../../src/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { createXdsCache, type NodeSnapshot, type XdsCache } from "../../src/xds/cache/cache.ts";
import { DeltaStream } from "../../src/xds/protocol/delta.ts";
import { SotwStream } from "../../src/xds/protocol/sotw.ts";
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, ROUTE_TYPE } from "../../src/xds/types.ts";
import { addIntention, changeHealth, PROXIES, publishAll } from "./xds_render.ts";

const argv = process.argv.slice(2);
const option = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const ROUNDS = Number(option("--rounds") ?? 3);
const VARIANT = option("--variant") ?? "sotw";
if (VARIANT !== "sotw" && VARIANT !== "delta") throw new Error("--variant sotw|delta");

/** One proxy's stream, answering like Envoy. */
interface Driver {
  /** Takes the node's current snapshot and answers responses until the stream has nothing to send. */
  update(): void;
}

const totals = { responses: 0, bytes: 0, digest: createHash("sha256") };
const count = (bytes: Uint8Array) => {
  totals.responses++;
  totals.bytes += bytes.length;
  totals.digest.update(bytes);
};

/** How one variant's stream is spoken to: its requests and its response serialization. */
interface Variant<Req, Resp extends { typeUrl: string }> {
  readonly stream: () => { onSnapshot(s: NodeSnapshot): void; onRequest(r: Req): unknown; next(): Resp | undefined };
  readonly encode: (r: Resp) => Uint8Array;
  /** The first request of a type: `names` subscribed (none: the legacy wildcard). */
  readonly subscribe: (typeUrl: string, names: string[]) => Req;
  /** The ACK of `r`; SotW repeats the type's names. */
  readonly ack: (r: Resp, names: string[]) => Req;
}

const SOTW: Variant<DiscoveryRequest, DiscoveryResponse> = {
  stream: () => new SotwStream(),
  encode: (r) => toBinary(DiscoveryResponseSchema, r),
  subscribe: (typeUrl, resourceNames) => create(DiscoveryRequestSchema, { typeUrl, resourceNames }),
  ack: (r, resourceNames) => create(DiscoveryRequestSchema, { typeUrl: r.typeUrl, versionInfo: r.versionInfo, responseNonce: r.nonce, resourceNames }),
};

const DELTA: Variant<DeltaDiscoveryRequest, DeltaDiscoveryResponse> = {
  stream: () => new DeltaStream(),
  encode: (r) => toBinary(DeltaDiscoveryResponseSchema, r),
  subscribe: (typeUrl, resourceNamesSubscribe) => create(DeltaDiscoveryRequestSchema, { typeUrl, resourceNamesSubscribe }),
  ack: (r) => create(DeltaDiscoveryRequestSchema, { typeUrl: r.typeUrl, responseNonce: r.nonce }),
};

/**
 * Opens node `id`'s stream: wildcard CDS and LDS, then (as Envoy does after CDS and LDS responses) EDS
 * and RDS for every such resource the node has; every response is serialized and ACKed.
 */
function driver<Req, Resp extends { typeUrl: string }>(v: Variant<Req, Resp>, cache: XdsCache, id: string): Driver {
  const s = v.stream();
  const subs = new Map<string, string[]>();
  const drain = () => {
    for (let r = s.next(); r; r = s.next()) {
      count(v.encode(r));
      s.onRequest(v.ack(r, subs.get(r.typeUrl) ?? []));
      const follow = r.typeUrl === CLUSTER_TYPE ? ENDPOINT_TYPE : r.typeUrl === LISTENER_TYPE ? ROUTE_TYPE : undefined;
      if (follow && !subs.has(follow)) {
        subs.set(follow, [...(cache.get(id)?.types.get(follow)?.resources.keys() ?? [])]);
        s.onRequest(v.subscribe(follow, subs.get(follow)!));
      }
    }
  };
  s.onSnapshot(cache.get(id)!);
  s.onRequest(v.subscribe(CLUSTER_TYPE, []));
  s.onRequest(v.subscribe(LISTENER_TYPE, []));
  drain();
  return { update: () => (s.onSnapshot(cache.get(id)!), drain()) };
}

function timed(f: () => void): number {
  const c0 = process.cpuUsage();
  f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

if (import.meta.main) {
  const cache = createXdsCache();
  publishAll(cache);
  const ids = cache.nodes();
  let drivers: Driver[] = [];
  const openMs = timed(() => void (drivers = ids.map((id) => (VARIANT === "sotw" ? driver(SOTW, cache, id) : driver(DELTA, cache, id)))));
  const line = (phase: string, publishMs: number, streamMs: number, before: { responses: number; bytes: number }) =>
    console.log(
      `${VARIANT} ${phase.padEnd(12)} publish ${(publishMs / ids.length).toFixed(3)} ms, streams ${(streamMs / ids.length).toFixed(3)} ms CPU per proxy update; ` +
        `${totals.responses - before.responses} responses, ${((totals.bytes - before.bytes) / 1024 / ids.length).toFixed(2)} KB per proxy`,
    );
  line("open", 0, openMs, { responses: 0, bytes: 0 });
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, change] of [["health", changeHealth], ["intention", addIntention]] as const) {
      change(round);
      const before = { ...totals };
      const publishMs = publishAll(cache).cpuMs;
      const streamMs = timed(() => drivers.forEach((d) => d.update()));
      line(`${name} #${round + 1}`, publishMs, streamMs, before);
    }
  }
  console.log(`${VARIANT} ${PROXIES} proxies; digest of every response ${totals.digest.digest("hex").slice(0, 16)}`);
}
