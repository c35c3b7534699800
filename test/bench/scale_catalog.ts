/**
 * The catalog part of the scale benchmark: `nodes` nodes (each with a passing node check) and
 * `instances` service instances of `services` services, registered through `PUT /v1/txn` (Node, Check
 * and Service set operations, 64 per transaction), then the latency of the catalog reads a client
 * makes most: the service list, one service's instances, one service's health.
 *
 * Instance i is service i mod services, on node floor(i * nodes / instances), with ID `<service>-<i>`:
 * every service has instances/services instances, on different nodes.
 */
import { percentile } from "./kv_workload.ts";
import { runBatches, type BatchResult } from "./scale_load.ts";

export interface CatalogShape {
  readonly nodes: number;
  readonly services: number;
  readonly instances: number;
}

const pad = (i: number, n: number) => String(i).padStart(String(Math.max(1, n - 1)).length, "0");
export const nodeName = (shape: CatalogShape, n: number) => `node-${pad(n, shape.nodes)}`;
export const serviceName = (shape: CatalogShape, s: number) => `svc-${pad(s, shape.services)}`;

const TXN_OPS = 64;

async function txn(url: string, ops: unknown[], signal: AbortSignal): Promise<void> {
  const r = await fetch(`${url}/v1/txn`, { method: "PUT", body: JSON.stringify(ops), signal });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`HTTP ${r.status} on PUT /v1/txn: ${text.trim().slice(0, 200)}`);
}

function nodeOps(shape: CatalogShape, n: number): unknown[] {
  const Node = nodeName(shape, n);
  return [
    { Node: { Verb: "set", Node: { Node, Address: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` } } },
    // Not "serfHealth": the leader deregisters nodes with that check that are not gossip members
    // (Consul's reconcileReaped), which emptied the catalog when the reads came after a reconcile.
    { Check: { Verb: "set", Check: { Node, CheckID: "node-health", Name: "Node health", Status: "passing" } } },
  ];
}

function instanceOp(shape: CatalogShape, i: number): unknown {
  const s = i % shape.services;
  const Service = serviceName(shape, s);
  return {
    Service: {
      Verb: "set",
      Node: nodeName(shape, Math.floor((i * shape.nodes) / shape.instances)),
      Service: { ID: `${Service}-${i}`, Service, Port: 20000 + (i % 10000), Tags: ["v1", `shard-${s % 16}`] },
    },
  };
}

/** Registers the nodes, then the instances, with `loaders` concurrent transactions. */
export async function loadCatalog(url: string, shape: CatalogShape, loaders: number, timeoutMs: number): Promise<{ nodes: BatchResult; instances: BatchResult }> {
  const perNodeTxn = TXN_OPS / 2;
  const nodes = await runBatches({
    batches: Math.ceil(shape.nodes / perNodeTxn), loaders, timeoutMs,
    send: (b, signal) => {
      const ops: unknown[] = [];
      for (let n = b * perNodeTxn; n < Math.min(shape.nodes, (b + 1) * perNodeTxn); n++) ops.push(...nodeOps(shape, n));
      return txn(url, ops, signal);
    },
  });
  const instances = await runBatches({
    batches: Math.ceil(shape.instances / TXN_OPS), loaders, timeoutMs,
    send: (b, signal) => {
      const ops: unknown[] = [];
      for (let i = b * TXN_OPS; i < Math.min(shape.instances, (b + 1) * TXN_OPS); i++) ops.push(instanceOp(shape, i));
      return txn(url, ops, signal);
    },
  });
  return { nodes, instances };
}

/** Latencies of one kind of read, ms, and the size of its last answer. */
export interface ReadLatency {
  readonly what: string;
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly bytes: number;
}

/** Sends `count` GETs of `path(j)` one after another; `check` throws on a wrong answer. */
async function timeReads(url: string, what: string, count: number, path: (j: number) => string, check: (body: unknown, j: number) => void): Promise<ReadLatency> {
  const ms = new Float64Array(count);
  let bytes = 0;
  for (let j = 0; j < count; j++) {
    const t = performance.now();
    const r = await fetch(`${url}${path(j)}`, { signal: AbortSignal.timeout(120_000) });
    const text = await r.text();
    ms[j] = performance.now() - t;
    if (r.status !== 200) throw new Error(`GET ${path(j)}: HTTP ${r.status} ${text.slice(0, 120)}`);
    check(JSON.parse(text), j);
    bytes = text.length;
  }
  ms.sort();
  return { what, count, p50: percentile(ms, 0.5), p99: percentile(ms, 0.99), max: ms[count - 1]!, bytes };
}

/** The three reads, each checked against the shape (instance counts, service count). */
export async function catalogReads(url: string, shape: CatalogShape, listCount: number, oneCount: number): Promise<ReadLatency[]> {
  const perService = (s: number) => Math.floor(shape.instances / shape.services) + (s < shape.instances % shape.services ? 1 : 0);
  const pick = (j: number) => (j * 7919) % shape.services;
  const want = (what: string, got: number, expected: number) => {
    if (got !== expected) throw new Error(`${what}: ${got} entries, expected ${expected}`);
  };
  return [
    await timeReads(url, "GET /v1/catalog/services", listCount, () => "/v1/catalog/services", (b) =>
      want("/v1/catalog/services", Object.keys(b as object).filter((k) => k.startsWith("svc-")).length, shape.services)),
    await timeReads(url, "GET /v1/catalog/service/<one>", oneCount, (j) => `/v1/catalog/service/${serviceName(shape, pick(j))}`, (b, j) =>
      want(`/v1/catalog/service/${serviceName(shape, pick(j))}`, (b as unknown[]).length, perService(pick(j)))),
    await timeReads(url, "GET /v1/health/service/<one>", oneCount, (j) => `/v1/health/service/${serviceName(shape, pick(j))}`, (b, j) =>
      want(`/v1/health/service/${serviceName(shape, pick(j))}`, (b as unknown[]).length, perService(pick(j)))),
  ];
}
