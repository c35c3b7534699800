/**
 * A watch's result as Consul's CLI prints it. Consul decodes each answer into the Go API's types
 * (api/kv.go, catalog.go, health.go, agent.go, event.go in hashicorp/consul, v1.8) and encodes those
 * again, so what a handler reads is the API struct's layout, not the agent's JSON: the struct's fields in
 * declaration order, absent ones as Go's zero values (`""`, `0`, `false`, `null`), `omitempty` fields
 * dropped when empty, fields the struct lacks dropped, map keys sorted. Pure.
 */
import { bigintReplacer, formatGoDuration, parseGoDuration } from "../../../lib/index.ts";
import type { WatchSpec } from "./spec.ts";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown): number | bigint => (typeof v === "number" || typeof v === "bigint" ? v : 0);
const bool = (v: unknown): boolean => v === true;
/** Go `[]byte`: base64 text as sent, nil as null. */
const bytes = (v: unknown): string | null => (typeof v === "string" ? v : null);
const strings = (v: unknown): string[] | null => (Array.isArray(v) ? v.map(str) : null);
/** A Go map: keys sorted byte-wise (Go's encoding/json order), nil as null. */
function goMap<T>(v: unknown, value: (x: unknown) => T): Record<string, T> | null {
  if (!isObject(v)) return null;
  const out: Record<string, T> = {};
  for (const k of Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) out[k] = value(v[k]);
  return out;
}
const list = <T>(v: unknown, item: (x: unknown) => T): T[] | null => (Array.isArray(v) ? v.map(item) : null);
/** Go `*T` decoded from JSON: null stays nil. */
const ptr = <T>(v: unknown, shape: (x: Json) => T): T | null => (isObject(v) ? shape(v) : null);
/** An `omitempty` string or number field: present only when non-empty. */
const omitEmpty = (name: string, v: unknown): Json => (v === "" || v === 0 || v === undefined || v === null ? {} : { [name]: v });

/** api.KVPair. */
export function kvPair(v: Json): Json {
  return {
    Key: str(v.Key), CreateIndex: num(v.CreateIndex), ModifyIndex: num(v.ModifyIndex), LockIndex: num(v.LockIndex), Flags: num(v.Flags),
    Value: bytes(v.Value), Session: str(v.Session), ...omitEmpty("Namespace", str(v.Namespace)),
  };
}

/** api.Node. */
export function node(v: Json): Json {
  return {
    ID: str(v.ID), Node: str(v.Node), Address: str(v.Address), Datacenter: str(v.Datacenter),
    TaggedAddresses: goMap(v.TaggedAddresses, str), Meta: goMap(v.Meta, str), CreateIndex: num(v.CreateIndex), ModifyIndex: num(v.ModifyIndex),
  };
}

/**
 * api.AgentService, the `Service` of a health entry. `Proxy` and `Connect` are kept as the agent sent them
 * (their API structs are all `omitempty` fields and match the agent's JSON for the usual values).
 */
export function agentService(v: Json): Json {
  const tagged = goMap(v.TaggedAddresses, (a) => ({ Address: str(isObject(a) ? a.Address : ""), Port: num(isObject(a) ? a.Port : 0) }));
  const weights = isObject(v.Weights) ? v.Weights : {};
  return {
    ...omitEmpty("Kind", str(v.Kind)), ID: str(v.ID), Service: str(v.Service), Tags: strings(v.Tags), Meta: goMap(v.Meta, str), Port: num(v.Port), Address: str(v.Address),
    ...(tagged && Object.keys(tagged).length > 0 ? { TaggedAddresses: tagged } : {}),
    Weights: { Passing: num(weights.Passing), Warning: num(weights.Warning) }, EnableTagOverride: bool(v.EnableTagOverride),
    ...omitEmpty("CreateIndex", num(v.CreateIndex)), ...omitEmpty("ModifyIndex", num(v.ModifyIndex)), ...omitEmpty("ContentHash", str(v.ContentHash)),
    ...(isObject(v.Proxy) ? { Proxy: v.Proxy } : {}), ...(isObject(v.Connect) ? { Connect: v.Connect } : {}), ...omitEmpty("Namespace", str(v.Namespace)),
  };
}

/** A duration field of a check definition as api.HealthCheckDefinition's MarshalJSON writes it ("0s" when unset). */
function duration(v: unknown): string {
  let ns = 0;
  try {
    ns = typeof v === "string" ? parseGoDuration(v) : typeof v === "number" ? v : 0;
  } catch {
    ns = 0;
  }
  return formatGoDuration(ns);
}

/**
 * api.HealthCheckDefinition through its MarshalJSON: the three durations first (as Go duration
 * strings, from the `*Duration` fields when set, else the readable ones), then the plain fields.
 */
export function checkDefinition(v: Json): Json {
  return {
    Interval: duration(v.IntervalDuration ?? v.Interval), Timeout: duration(v.TimeoutDuration ?? v.Timeout),
    DeregisterCriticalServiceAfter: duration(v.DeregisterCriticalServiceAfterDuration ?? v.DeregisterCriticalServiceAfter),
    HTTP: str(v.HTTP), Header: goMap(v.Header, strings), Method: str(v.Method), Body: str(v.Body), TLSSkipVerify: bool(v.TLSSkipVerify), TCP: str(v.TCP),
  };
}

/** api.HealthCheck. */
export function healthCheck(v: Json): Json {
  return {
    Node: str(v.Node), CheckID: str(v.CheckID), Name: str(v.Name), Status: str(v.Status), Notes: str(v.Notes), Output: str(v.Output),
    ServiceID: str(v.ServiceID), ServiceName: str(v.ServiceName), ServiceTags: strings(v.ServiceTags), Type: str(v.Type), ...omitEmpty("Namespace", str(v.Namespace)),
    Definition: checkDefinition(isObject(v.Definition) ? v.Definition : {}), CreateIndex: num(v.CreateIndex), ModifyIndex: num(v.ModifyIndex),
  };
}

/** api.ServiceEntry. */
export function serviceEntry(v: Json): Json {
  return { Node: ptr(v.Node, node), Service: ptr(v.Service, agentService), Checks: list(v.Checks, (c) => ptr(c, healthCheck)) };
}

/** api.UserEvent. */
export function userEvent(v: Json): Json {
  return {
    ID: str(v.ID), Name: str(v.Name), Payload: bytes(v.Payload), NodeFilter: str(v.NodeFilter), ServiceFilter: str(v.ServiceFilter), TagFilter: str(v.TagFilter),
    Version: num(v.Version), LTime: num(v.LTime),
  };
}

/**
 * The result of one answer of the watch's endpoint (`body` the decoded JSON, null for a 404 of the KV
 * endpoints), as the Go API value the handler is given: a key's pair (null when the key does not
 * exist), a prefix's pairs, the service-name-to-tags map, the nodes, the health entries, the checks,
 * or the events.
 */
export function watchResult(spec: WatchSpec, body: unknown): unknown {
  switch (spec.type) {
    case "key": {
      const first = Array.isArray(body) ? body[0] : undefined;
      return isObject(first) ? kvPair(first) : null;
    }
    case "keyprefix":
      return list(body, (p) => ptr(p, kvPair));
    case "services":
      return goMap(body, strings);
    case "nodes":
      return list(body, (n) => ptr(n, node));
    case "service":
      return list(body, (e) => ptr(e, serviceEntry));
    case "checks":
      return list(body, (c) => ptr(c, healthCheck));
    case "event":
      return list(body, (e) => ptr(e, userEvent));
  }
}

const UINT64_MASK = (1n << 64n) - 1n;

/**
 * api's `Event.IDToIndex` (the agent's uuidToUint64): the 64-bit index of an event ID, the XOR of the
 * UUID's first and last 16 hex digits read as big-endian numbers. Undefined for an ID that is not a
 * UUID (Go panics).
 */
export function eventIdToIndex(id: string): bigint | undefined {
  if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(id)) return undefined;
  const lower = BigInt(`0x${id.slice(0, 8)}${id.slice(9, 13)}${id.slice(14, 18)}`);
  const upper = BigInt(`0x${id.slice(19, 23)}${id.slice(24, 36)}`);
  return (lower ^ upper) & UINT64_MASK;
}

/**
 * The event watch's pruning (api/watch/funcs.go eventWatch): the events after the first one whose ID's
 * index is the index the query blocked on (the newest event the last answer ended with); all of them
 * when none is. `events` is null for a null list.
 */
export function pruneEvents<T extends { readonly ID?: unknown }>(events: readonly T[] | null, lastIndex: bigint | null): readonly T[] | null {
  if (events === null || lastIndex === null) return events;
  const at = events.findIndex((e) => typeof e.ID === "string" && eventIdToIndex(e.ID) === lastIndex);
  return at < 0 ? events : events.slice(at + 1);
}

const goEscapes = (text: string) => text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/**
 * Go's encoding/json output for these values: `json.MarshalIndent(v, "", "    ")` with `indent`, else
 * compact as `json.Marshal` (the handler's stdin adds the Encoder's newline itself). Both use Go's
 * HTML-safe escapes of `<`, `>`, `&`, U+2028 and U+2029; bigints are exact number literals.
 */
export function goJson(value: unknown, indent?: boolean): string {
  return goEscapes(JSON.stringify(value, bigintReplacer, indent ? 4 : undefined));
}
