/** Shape checks for decoded commands; each throws StateCommandError naming the path that is wrong. */
import { fromBase64 } from "./bytes.ts";
import { StateCommandError } from "./commands.ts";

/** A decoded JSON object. */
export type Obj = Record<string, unknown>;

/** A plain (non-array, non-null) object. */
export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

/** `o[k]` must be a string. */
export function reqStr(o: Obj, k: string, path: string): void {
  if (typeof o[k] !== "string") bad(`${path}.${k}`, "must be a string");
}

/** `o[k]` must be a string when present. */
export function optStr(o: Obj, k: string, path: string): void {
  if (o[k] !== undefined && typeof o[k] !== "string") bad(`${path}.${k}`, "must be a string");
}

/** `o[k]` must be a finite number when present. */
/** An optional Go uint64: a non-negative safe integer, or a bigint up to 2^64 - 1 (parseExact's form). */
export function optUint64(o: Obj, k: string, path: string): void {
  const v = o[k];
  if (v === undefined) return;
  const ok = typeof v === "bigint" ? v >= 0n && v < 2n ** 64n : typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
  if (!ok) bad(`${path}.${k}`, "must be an unsigned 64-bit integer");
}

export function optNum(o: Obj, k: string, path: string): void {
  const v = o[k];
  if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v))) bad(`${path}.${k}`, "must be a number");
}

type Kind = "str" | "num" | "bool" | "obj" | "strArr" | "strMap";

const KIND_TEXT: Record<Kind, string> = {
  str: "a string",
  num: "a number",
  bool: "a boolean",
  obj: "an object",
  strArr: "an array of strings or null",
  strMap: "an object of strings or null",
};

function is(kind: Kind, v: unknown): boolean {
  switch (kind) {
    case "str":
      return typeof v === "string";
    case "num":
      return typeof v === "number" && Number.isFinite(v);
    case "bool":
      return typeof v === "boolean";
    case "obj":
      return isObj(v);
    case "strArr":
      return v === null || (Array.isArray(v) && v.every((x) => typeof x === "string"));
    case "strMap":
      return v === null || (isObj(v) && Object.values(v).every((x) => typeof x === "string"));
  }
}

/** Checks the optional fields of `o` named in `spec` (absent fields pass). */
export function checkShape(o: Obj, path: string, spec: Readonly<Record<string, Kind>>): void {
  for (const [k, kind] of Object.entries(spec)) {
    if (o[k] !== undefined && !is(kind, o[k])) bad(`${path}.${k}`, `must be ${KIND_TEXT[kind]}`);
  }
}

/** Checks the fields of `o` named in `spec`: each must be present and of its kind. */
export function checkRequired(o: Obj, path: string, spec: Readonly<Record<string, Kind>>): void {
  for (const [k, kind] of Object.entries(spec)) {
    if (!is(kind, o[k]) || o[k] === null) bad(`${path}.${k}`, `must be ${KIND_TEXT[kind].replace(" or null", "")}`);
  }
}

/** `o[k]` must be a non-negative safe integer (a Raft index). */
export function reqIndex(o: Obj, k: string, path: string): number {
  const v = o[k];
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) bad(`${path}.${k}`, "must be a non-negative integer");
  return v;
}

/** `o[k]` decoded from base64; null or absent (as it is) unless `required`. */
export function bytesField(o: Obj, k: string, path: string): Uint8Array | null | undefined;
export function bytesField(o: Obj, k: string, path: string, required: true): Uint8Array;
export function bytesField(o: Obj, k: string, path: string, required = false): Uint8Array | null | undefined {
  const v = o[k];
  if (!required && (v === undefined || v === null)) return v;
  if (typeof v !== "string") bad(`${path}.${k}`, required ? "must be a base64 string" : "must be a base64 string or null");
  try {
    return fromBase64(v);
  } catch {
    return bad(`${path}.${k}`, "is not valid base64");
  }
}

/** `o[k]` must be an array of objects; returns it. */
export function objArray(o: Obj, k: string, path: string): Obj[] {
  const v = o[k];
  if (!Array.isArray(v)) bad(`${path}.${k}`, "must be an array");
  v.forEach((x, i) => {
    if (!isObj(x)) bad(`${path}.${k}[${i}]`, "must be an object");
  });
  return v as Obj[];
}

const KINDS = new Set(["", "connect-proxy", "mesh-gateway", "terminating-gateway", "ingress-gateway"]);

/** A NodeService as a registration carries it. */
export function serviceShape(s: unknown, path: string): void {
  if (!isObj(s)) bad(path, "must be an object");
  checkShape(s, path, {
    Kind: "str", ID: "str", Service: "str", Tags: "strArr", Address: "str", Meta: "strMap", Port: "num",
    Weights: "obj", EnableTagOverride: "bool", Proxy: "obj", Connect: "obj", TaggedAddresses: "obj",
  });
  if (typeof s.Kind === "string" && !KINDS.has(s.Kind)) bad(`${path}.Kind`, `${JSON.stringify(s.Kind)} is not a service kind`);
  if (isObj(s.Weights)) checkShape(s.Weights, `${path}.Weights`, { Passing: "num", Warning: "num" });
  if (isObj(s.TaggedAddresses)) {
    for (const [k, a] of Object.entries(s.TaggedAddresses)) {
      if (!isObj(a)) bad(`${path}.TaggedAddresses.${k}`, "must be an object");
      checkShape(a, `${path}.TaggedAddresses.${k}`, { Address: "str", Port: "num" });
    }
  }
  if (isObj(s.Proxy)) {
    checkShape(s.Proxy, `${path}.Proxy`, {
      DestinationServiceName: "str", DestinationServiceID: "str", LocalServiceAddress: "str", LocalServicePort: "num",
      Config: "obj", MeshGateway: "obj", Expose: "obj",
    });
    const ups = s.Proxy.Upstreams;
    if (ups !== undefined && ups !== null && (!Array.isArray(ups) || !ups.every(isObj))) bad(`${path}.Proxy.Upstreams`, "must be an array of objects");
  }
  if (isObj(s.Connect)) checkShape(s.Connect, `${path}.Connect`, { Native: "bool" });
}

/** A HealthCheck as a registration (or a snapshot) carries it; throws StateCommandError naming the path. */
export function healthCheckShape(c: unknown, path: string): asserts c is Obj {
  if (!isObj(c)) bad(path, "must be an object");
  for (const k of ["Node", "CheckID", "Name", "Status", "Notes", "Output", "ServiceID", "ServiceName", "Type"]) optStr(c, k, path);
  if (typeof c.Status === "string" && !["", "passing", "warning", "critical"].includes(c.Status)) {
    bad(`${path}.Status`, "must be passing, warning or critical");
  }
  checkShape(c, path, { ServiceTags: "strArr", Definition: "obj" });
}
