/**
 * Strict decoding helpers for the gateway's configuration store: an Any is decoded only when its type
 * URL is the one expected, fields the proto does not know and fields the gateway does not implement
 * are refused by name, so a configuration is either applied as Envoy would apply it or NACKed, never
 * half-applied. Decoders throw `Nack`; the store turns it into the NACK's error_detail.
 */
import { fromBinary, isFieldSet, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { Any, Duration } from "@bufbuild/protobuf/wkt";
import { AddressSchema, SocketAddressSchema, type Address } from "../gen/envoy/config/core/v3/address_pb.ts";
import { parseIp } from "../lib/index.ts";

/** A reason to refuse a resource; `message` already names where in it the problem is. */
export class Nack extends Error {
  override readonly name = "Nack";
}

/** The Envoy type URL of a message type. */
export function typeUrlOf(schema: DescMessage): string {
  return `type.googleapis.com/${schema.typeName}`;
}

/**
 * Decodes `any` as `schema` after checking its type URL; a message with fields unknown to the proto
 * (a newer control plane's) is refused rather than half-understood.
 */
export function unpack<D extends DescMessage>(any: Any, schema: D, path: string): MessageShape<D> {
  const want = typeUrlOf(schema);
  if (any.typeUrl !== want) throw new Nack(`${path}: type ${any.typeUrl || "(none)"} where ${want} was expected`);
  let msg: MessageShape<D>;
  try {
    msg = fromBinary(schema, any.value, { readUnknownFields: true });
  } catch (err) {
    throw new Nack(`${path}: ${schema.typeName} does not decode: ${err instanceof Error ? err.message : String(err)}`);
  }
  return msg;
}

/**
 * Refuses `msg` when it has unknown fields, or sets any field not in `allowed` (proto field names):
 * the gateway does not implement it.
 */
export function onlyFields<D extends DescMessage>(schema: D, msg: MessageShape<D>, allowed: readonly string[], path: string): void {
  const unknown = (msg as { $unknown?: { no: number }[] }).$unknown;
  if (unknown?.length) throw new Nack(`${path}: unknown field ${unknown.map((u) => u.no).join(", ")} in ${schema.typeName}`);
  for (const f of schema.fields) {
    if (!allowed.includes(f.name) && isFieldSet(msg, f)) throw new Nack(`${path}: ${f.name} is not supported by the built-in gateway`);
  }
}

/** A Duration in ms (nanos rounded to the ms); refuses negative values. */
export function durationMs(d: Duration, path: string): number {
  const ms = Number(d.seconds) * 1000 + Math.round(d.nanos / 1e6);
  if (!Number.isFinite(ms) || ms < 0 || d.nanos < 0) throw new Nack(`${path}: negative or invalid duration`);
  return ms;
}

/** Joins a path and a field name. */
export function at(path: string, field: string): string {
  return path ? `${path}.${field}` : field;
}

/**
 * A TCP socket address (`socket_address` with `port_value`); pipes, internal addresses, UDP, named
 * ports and custom resolvers are refused. `minPort` 0 lets a listener ask for an ephemeral port.
 */
export function socketAddressOf(addr: Address | undefined, path: string, minPort: number): { address: string; port: number } {
  if (!addr) throw new Nack(`${path}: address is required`);
  onlyFields(AddressSchema, addr, ["socket_address"], path);
  if (addr.address.case !== "socketAddress") throw new Nack(`${path}: only socket_address is supported`);
  const sa = addr.address.value;
  const sp = at(path, "socket_address");
  onlyFields(SocketAddressSchema, sa, ["protocol", "address", "port_value"], sp);
  if (sa.protocol !== 0) throw new Nack(`${sp}: only TCP is supported`);
  if (sa.address === "") throw new Nack(`${sp}: address is empty`);
  const port = sa.portSpecifier.case === "portValue" ? sa.portSpecifier.value : -1;
  if (port < minPort || port > 65535) throw new Nack(`${sp}: port_value ${port < 0 ? "is missing" : `${port} is out of range`}`);
  return { address: sa.address, port };
}

/** Whether `text` is an IP literal (Envoy takes only those for EDS endpoints and listener addresses). */
export function isIp(text: string): boolean {
  try {
    parseIp(text);
    return true;
  } catch {
    return false;
  }
}
