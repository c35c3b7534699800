/**
 * Test kit: strict decoding of generated resources against Envoy's protos and a checker for the
 * protoc-gen-validate rules read from the generated descriptors (`(validate.rules)` field options and
 * `(validate.required)` oneof options). Every Any is resolved through the registry and decoded with
 * unknown fields kept, so a field Envoy's proto does not have shows up as a violation.
 *
 * PGV rules checked: message.required, oneof required; numeric const/lt/lte/gt/gte/in/not_in (also on
 * wrapper types); string len/min_len/max_len/min_bytes/max_bytes/prefix/suffix/contains/in/not_in/
 * well_known_regex (HTTP header name/value) with ignore_empty; bytes min_len/max_len; enum
 * defined_only/const/in/not_in; bool const; repeated min_items/max_items/unique/items; map
 * min_pairs/max_pairs/keys/values; duration required/lt/lte/gt/gte; any required/in/not_in. Any other
 * rule on a field that is set is reported as unsupported, so nothing passes unchecked.
 */
import { createRegistry, fromBinary, getExtension, hasExtension, isFieldSet, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { disabled, file_validate_validate, required, rules as fieldRules, type FieldRules } from "../../gen/validate/validate_pb.ts";
import { envoyRegistry } from "./index.ts";

type Rules = FieldRules["type"];

const validateRegistry = createRegistry(file_validate_validate);

/**
 * validate.proto is proto2: an unset optional reads as its default, so rules are read through `isFieldSet`.
 * Returns a view of `m` whose unset optional fields are undefined.
 */
function setOnly<T extends Message>(m: T): T {
  const d = validateRegistry.getMessage(m.$typeName);
  if (!d) return m;
  const view: Record<string, unknown> = { $typeName: m.$typeName };
  for (const f of d.fields) view[f.localName] = f.fieldKind === "list" || isFieldSet(m, f) ? (m as unknown as Record<string, unknown>)[f.localName] : undefined;
  for (const o of d.oneofs) view[o.localName] = (m as unknown as Record<string, unknown>)[o.localName];
  return view as T;
}

/** Decodes an Any payload of `typeUrl` strictly and returns every violation found (empty when clean). */
export function strictCheckAny(typeUrl: string, value: Uint8Array, path = "$"): string[] {
  const out: string[] = [];
  checkAny(typeUrl, value, path, out);
  return out;
}

/** Checks an already decoded message (its nested Anys included). */
export function strictCheckMessage(schema: DescMessage, msg: Message, path = "$"): string[] {
  const out: string[] = [];
  walk(reflect(schema, msg), path, out);
  return out;
}

function checkAny(typeUrl: string, value: Uint8Array, path: string, out: string[]): void {
  const name = typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
  const schema = envoyRegistry.getMessage(name);
  if (!schema) {
    out.push(`${path}: Any type ${typeUrl} is not in the registry`);
    return;
  }
  let msg: Message;
  try {
    msg = fromBinary(schema, value, { readUnknownFields: true });
  } catch (e) {
    out.push(`${path}: ${name} does not decode: ${(e as Error).message}`);
    return;
  }
  walk(reflect(schema, msg), `${path}<${name}>`, out);
}

function walk(r: ReflectMessage, path: string, out: string[]): void {
  const desc = r.desc;
  if (r.getUnknown()?.length) out.push(`${path}: unknown fields ${r.getUnknown()!.map((u) => u.no).join(",")} in ${desc.typeName}`);
  if (desc.typeName === "google.protobuf.Any") {
    const typeUrl = r.get(desc.field["typeUrl"]!) as string;
    const value = r.get(desc.field["value"]!) as Uint8Array;
    checkAny(typeUrl, value, path, out);
    return;
  }
  const mopts = desc.proto.options;
  if (mopts && hasExtension(mopts, disabled) && getExtension(mopts, disabled)) return;
  for (const oneof of desc.oneofs) {
    const o = oneof.proto.options;
    if (o && hasExtension(o, required) && getExtension(o, required) && !oneof.fields.some((f) => r.isSet(f))) {
      out.push(`${path}: oneof ${oneof.name} is required`);
    }
  }
  for (const f of desc.fields) {
    const fpath = `${path}.${f.name}`;
    const opts = f.proto.options;
    const rules = opts && hasExtension(opts, fieldRules) ? getExtension(opts, fieldRules) : undefined;
    const set = r.isSet(f);
    // A oneof member's rules apply only when that member is the one set.
    if (!set && f.oneof) continue;
    if (rules?.message && setOnly(rules.message).required && !set) out.push(`${fpath}: required`);
    if (!set) {
      if (rules?.type.case === "duration" && setOnly(rules.type.value).required) out.push(`${fpath}: duration required`);
      if (rules?.type.case === "any" && setOnly(rules.type.value).required) out.push(`${fpath}: any required`);
      if (rules?.type.case === "repeated" && (rules.type.value.minItems ?? 0n) > 0n) out.push(`${fpath}: at least ${rules.type.value.minItems} items`);
      if (rules?.type.case === "map" && (rules.type.value.minPairs ?? 0n) > 0n) out.push(`${fpath}: at least ${rules.type.value.minPairs} pairs`);
      if (rules?.type.case === "string" && (setOnly(rules.type.value).minLen ?? 0n) > 0n && !rules.type.value.ignoreEmpty) out.push(`${fpath}: min_len ${rules.type.value.minLen}`);
      continue;
    }
    const v = r.get(f);
    if (f.fieldKind === "list") {
      const list = [...(v as Iterable<unknown>)];
      if (rules?.type.case === "repeated") {
        const rr = setOnly(rules.type.value);
        if (rr.minItems !== undefined && BigInt(list.length) < rr.minItems) out.push(`${fpath}: at least ${rr.minItems} items`);
        if (rr.maxItems !== undefined && BigInt(list.length) > rr.maxItems) out.push(`${fpath}: at most ${rr.maxItems} items`);
        if (rr.unique && new Set(list.map((x) => JSON.stringify(x, (_k, y) => (typeof y === "bigint" ? String(y) : y)))).size !== list.length) out.push(`${fpath}: items not unique`);
      } else if (rules?.type.case) out.push(`${fpath}: unsupported rule ${rules.type.case} on a list`);
      const itemRules = rules?.type.case === "repeated" ? rules.type.value.items : undefined;
      list.forEach((item, i) => checkValue(f, item, itemRules?.type, `${fpath}[${i}]`, out, itemRules?.message?.required));
    } else if (f.fieldKind === "map") {
      const entries = [...(v as Iterable<[unknown, unknown]>)];
      if (rules?.type.case === "map") {
        const mr = setOnly(rules.type.value);
        if (mr.minPairs !== undefined && BigInt(entries.length) < mr.minPairs) out.push(`${fpath}: at least ${mr.minPairs} pairs`);
        if (mr.maxPairs !== undefined && BigInt(entries.length) > mr.maxPairs) out.push(`${fpath}: at most ${mr.maxPairs} pairs`);
      } else if (rules?.type.case) out.push(`${fpath}: unsupported rule ${rules.type.case} on a map`);
      for (const [k, val] of entries) {
        if (rules?.type.case === "map" && rules.type.value.keys) checkScalar(k, rules.type.value.keys.type, `${fpath}{${String(k)}}key`, out);
        checkValue(f, val, rules?.type.case === "map" ? rules.type.value.values?.type : undefined, `${fpath}{${String(k)}}`, out);
      }
    } else {
      checkValue(f, v, rules?.type, fpath, out);
    }
  }
}

function checkValue(f: DescField, v: unknown, rules: Rules | undefined, path: string, out: string[], requiredItem?: boolean): void {
  if (isReflect(v)) {
    const tn = v.desc.typeName;
    if (tn.startsWith("google.protobuf.") && tn.endsWith("Value") && rules?.case) {
      checkScalar(v.get(v.desc.field["value"]!), rules, path, out);
    } else if (tn === "google.protobuf.Duration" && rules?.case === "duration") {
      const d = setOnly(rules.value);
      const ns = (v.get(v.desc.field["seconds"]!) as bigint) * 1_000_000_000n + BigInt(v.get(v.desc.field["nanos"]!) as number);
      const nsOf = (x: { seconds: bigint; nanos: number } | undefined) => (x ? x.seconds * 1_000_000_000n + BigInt(x.nanos) : undefined);
      const [gt, gte, lt, lte] = [nsOf(d.gt), nsOf(d.gte), nsOf(d.lt), nsOf(d.lte)];
      if (gt !== undefined && !(ns > gt)) out.push(`${path}: duration must be > ${gt}ns`);
      if (gte !== undefined && !(ns >= gte)) out.push(`${path}: duration must be >= ${gte}ns`);
      if (lt !== undefined && !(ns < lt)) out.push(`${path}: duration must be < ${lt}ns`);
      if (lte !== undefined && !(ns <= lte)) out.push(`${path}: duration must be <= ${lte}ns`);
    } else if (tn === "google.protobuf.Any" && rules?.case === "any") {
      const url = v.get(v.desc.field["typeUrl"]!) as string;
      if (rules.value.in.length > 0 && !rules.value.in.includes(url)) out.push(`${path}: Any type ${url} not in ${rules.value.in.join(",")}`);
      if (rules.value.notIn.includes(url)) out.push(`${path}: Any type ${url} not allowed`);
    } else if (rules?.case) {
      out.push(`${path}: unsupported rule ${rules.case} on message ${tn}`);
    }
    walk(v, path, out);
    return;
  }
  if (v === undefined && requiredItem) out.push(`${path}: required`);
  if (f.fieldKind === "enum" || (f.fieldKind === "list" && f.listKind === "enum")) {
    const e = f.enum!;
    if (rules?.case === "enum") {
      const er = setOnly(rules.value);
      if (er.definedOnly && !e.values.some((x) => x.number === v)) out.push(`${path}: enum value ${String(v)} not defined in ${e.typeName}`);
      if (er.const !== undefined && v !== er.const) out.push(`${path}: enum must be ${er.const}`);
      if (er.in.length > 0 && !er.in.includes(v as number)) out.push(`${path}: enum not in ${er.in.join(",")}`);
      if (er.notIn.includes(v as number)) out.push(`${path}: enum value ${String(v)} not allowed`);
    } else if (rules?.case) out.push(`${path}: unsupported rule ${rules.case} on an enum`);
    return;
  }
  checkScalar(v, rules, path, out);
}

function isReflect(v: unknown): v is ReflectMessage {
  return typeof v === "object" && v !== null && "desc" in v && "isSet" in v;
}

const HEADER_NAME = /^:?[0-9a-zA-Z!#$%&'*+\-.^_|~`]+$/;
const HEADER_VALUE = /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/;
const HEADER_LOOSE = /^[^\u0000\u000A\u000D]*$/;

function checkScalar(v: unknown, rules: Rules | undefined, path: string, out: string[]): void {
  if (!rules?.case) return;
  switch (rules.case) {
    case "string": {
      const s = v as string;
      const sr = setOnly(rules.value);
      if (sr.ignoreEmpty && s === "") return;
      const chars = [...s].length;
      const bytes = new TextEncoder().encode(s).length;
      if (sr.len !== undefined && BigInt(chars) !== sr.len) out.push(`${path}: len must be ${sr.len}`);
      if (sr.minLen !== undefined && BigInt(chars) < sr.minLen) out.push(`${path}: min_len ${sr.minLen}`);
      if (sr.maxLen !== undefined && BigInt(chars) > sr.maxLen) out.push(`${path}: max_len ${sr.maxLen}`);
      if (sr.minBytes !== undefined && BigInt(bytes) < sr.minBytes) out.push(`${path}: min_bytes ${sr.minBytes}`);
      if (sr.maxBytes !== undefined && BigInt(bytes) > sr.maxBytes) out.push(`${path}: max_bytes ${sr.maxBytes}`);
      if (sr.prefix !== undefined && !s.startsWith(sr.prefix)) out.push(`${path}: prefix ${sr.prefix}`);
      if (sr.suffix !== undefined && !s.endsWith(sr.suffix)) out.push(`${path}: suffix ${sr.suffix}`);
      if (sr.contains !== undefined && !s.includes(sr.contains)) out.push(`${path}: contains ${sr.contains}`);
      if (sr.in.length > 0 && !sr.in.includes(s)) out.push(`${path}: not in ${sr.in.join(",")}`);
      if (sr.notIn.includes(s)) out.push(`${path}: ${s} not allowed`);
      if (sr.pattern !== undefined && !new RegExp(sr.pattern, "u").test(s)) out.push(`${path}: pattern ${sr.pattern}`);
      if (sr.wellKnown.case === "wellKnownRegex") {
        const strict = sr.strict ?? true;
        const re = sr.wellKnown.value === 1 ? (strict ? HEADER_NAME : HEADER_LOOSE) : strict ? HEADER_VALUE : HEADER_LOOSE;
        if (!re.test(s)) out.push(`${path}: not a valid HTTP header ${sr.wellKnown.value === 1 ? "name" : "value"}`);
      } else if (sr.wellKnown.case) out.push(`${path}: unsupported well-known string rule ${sr.wellKnown.case}`);
      return;
    }
    case "bytes": {
      const b = v as Uint8Array;
      const br = setOnly(rules.value);
      if (br.minLen !== undefined && BigInt(b.length) < br.minLen) out.push(`${path}: min_len ${br.minLen}`);
      if (br.maxLen !== undefined && BigInt(b.length) > br.maxLen) out.push(`${path}: max_len ${br.maxLen}`);
      return;
    }
    case "bool":
      if (setOnly(rules.value).const !== undefined && v !== rules.value.const) out.push(`${path}: must be ${rules.value.const}`);
      return;
    case "float": case "double": case "int32": case "int64": case "uint32": case "uint64": case "sint32": case "sint64":
    case "fixed32": case "fixed64": case "sfixed32": case "sfixed64": {
      const nr = setOnly(rules.value) as { const?: number | bigint; lt?: number | bigint; lte?: number | bigint; gt?: number | bigint; gte?: number | bigint; in: (number | bigint)[]; notIn: (number | bigint)[] };
      const n = Number(v);
      const num = (x: number | bigint | undefined) => (x === undefined ? undefined : Number(x));
      const [c, lt, lte, gt, gte] = [num(nr.const), num(nr.lt), num(nr.lte), num(nr.gt), num(nr.gte)];
      if (c !== undefined && n !== c) out.push(`${path}: must be ${c}`);
      // PGV: gt with lt < gt means "outside the range"; Envoy's protos only use plain bounds.
      if (gt !== undefined && !(n > gt)) out.push(`${path}: must be > ${gt}`);
      if (gte !== undefined && !(n >= gte)) out.push(`${path}: must be >= ${gte}`);
      if (lt !== undefined && !(n < lt)) out.push(`${path}: must be < ${lt}`);
      if (lte !== undefined && !(n <= lte)) out.push(`${path}: must be <= ${lte}`);
      if (nr.in.length > 0 && !nr.in.map(Number).includes(n)) out.push(`${path}: not in ${nr.in.join(",")}`);
      if (nr.notIn.map(Number).includes(n)) out.push(`${path}: ${n} not allowed`);
      return;
    }
    default:
      out.push(`${path}: unsupported rule ${rules.case}`);
  }
}
