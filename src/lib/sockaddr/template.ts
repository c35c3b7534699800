/**
 * go-sockaddr's template.Parse (template/template.go in hashicorp/go-sockaddr) over an injected view of
 * the host: text/template execution of pipelines with go-sockaddr's function map, the initial dot being
 * every interface address. A piped value is the last argument of the next function; arguments are
 * checked against the Go signatures (`limit` takes an unsigned integer, not "1"). Pure and synchronous;
 * every failure is a SockaddrTemplateError whose message says what and where.
 */
import type { SockaddrHost } from "./host.ts";
import {
  allInterfaces, defaultInterfaces, excludeIfs, ifAddrsMath, ifAddrString, ifAttrs, includeIfs, joinIfAddrs, limitIfAddrs, offsetIfAddrs, SockaddrError, sortIfBy,
  uniqueIfAddrsBy, type IfAddrs,
} from "./ifaddrs.ts";
import { interfaceIp, interfaceIps, privateInterfaces, privateIp, privateIps, publicInterfaces, publicIp, publicIps } from "./sources.ts";
import { parseTemplate, SockaddrTemplateError, type Command, type Operand, type Pipeline } from "./template_parse.ts";

export { SockaddrTemplateError } from "./template_parse.ts";

type Value = string | number | boolean | IfAddrs;
type Kind = "string" | "uint" | "int" | "ifaddrs" | "any";

interface Func {
  readonly params: readonly Kind[];
  readonly call: (host: SockaddrHost, args: readonly Value[]) => Value;
}

const s = (v: Value) => v as string;
const n = (v: Value) => v as number;
const l = (v: Value) => v as IfAddrs;

/** go-sockaddr's SourceFuncs, SortFuncs, FilterFuncs and HelperFuncs with their Go parameter kinds. */
const FUNCS: Readonly<Record<string, Func>> = {
  GetAllInterfaces: { params: [], call: (h) => allInterfaces(h) },
  GetDefaultInterfaces: { params: [], call: (h) => defaultInterfaces(h) },
  GetPrivateInterfaces: { params: [], call: (h) => privateInterfaces(h) },
  GetPublicInterfaces: { params: [], call: (h) => publicInterfaces(h) },
  GetPrivateIP: { params: [], call: (h) => privateIp(h) },
  GetPrivateIPs: { params: [], call: (h) => privateIps(h) },
  GetPublicIP: { params: [], call: (h) => publicIp(h) },
  GetPublicIPs: { params: [], call: (h) => publicIps(h) },
  GetInterfaceIP: { params: ["string"], call: (h, [re]) => interfaceIp(h, s(re!)) },
  GetInterfaceIPs: { params: ["string"], call: (h, [re]) => interfaceIps(h, s(re!)) },
  sort: { params: ["string", "ifaddrs"], call: (h, [by, list]) => sortIfBy(h, s(by!), l(list!)) },
  include: { params: ["string", "string", "ifaddrs"], call: (_, [k, v, list]) => includeIfs(s(k!), s(v!), l(list!)) },
  exclude: { params: ["string", "string", "ifaddrs"], call: (_, [k, v, list]) => excludeIfs(s(k!), s(v!), l(list!)) },
  attr: {
    params: ["string", "any"],
    call: (_, [name, x]) => {
      if (Array.isArray(x)) return ifAttrs(s(name!), x as IfAddrs);
      throw new SockaddrError(`unable to obtain attribute ${s(name!)} from type ${goTypeOf(x!)} (${printValue(x!)})`);
    },
  },
  join: { params: ["string", "string", "ifaddrs"], call: (_, [name, sep, list]) => joinIfAddrs(s(name!), s(sep!), l(list!)) },
  limit: { params: ["uint", "ifaddrs"], call: (_, [k, list]) => limitIfAddrs(n(k!), l(list!)) },
  offset: { params: ["int", "ifaddrs"], call: (_, [k, list]) => offsetIfAddrs(n(k!), l(list!)) },
  unique: { params: ["string", "ifaddrs"], call: (_, [name, list]) => uniqueIfAddrsBy(s(name!), l(list!)) },
  math: { params: ["string", "string", "ifaddrs"], call: (_, [op, v, list]) => ifAddrsMath(s(op!), s(v!), l(list!)) },
};

const GO_KIND: Readonly<Record<Kind, string>> = { string: "string", uint: "uint", int: "int", ifaddrs: "sockaddr.IfAddrs", any: "interface {}" };

function goTypeOf(v: Value): string {
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "float64";
  return "sockaddr.IfAddrs";
}

/** How text/template prints an action's value (fmt.Sprint): IfAddrs as `[a b]` of IfAddr.String(). */
function printValue(v: Value): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return `[${v.map(ifAddrString).join(" ")}]`;
}

const fail = (message: string): never => {
  throw new SockaddrTemplateError(message);
};

/** text/template's evalArg for a literal, or validateType for a computed value, against a parameter kind. */
function convert(kind: Kind, v: Value, literal: Operand | undefined): Value {
  const integral = typeof v === "number" && Number.isInteger(v);
  if (literal?.kind === "string" && (kind === "uint" || kind === "int")) return fail(`expected integer; found ${literal.text}`);
  if (literal?.kind === "number" && kind === "string") return fail(`expected string; found ${literal.text}`);
  if (kind === "any") return v;
  if (kind === "string" && typeof v === "string") return v;
  if (kind === "ifaddrs" && Array.isArray(v)) return v;
  if (kind === "int" && integral) return v;
  if (kind === "uint" && integral) return (v as number) >= 0 ? v : fail(`expected unsigned integer; found ${literal?.kind === "number" ? literal.text : v}`);
  if (literal?.kind === "number" && (kind === "int" || kind === "uint")) return fail(`expected integer; found ${literal.text}`);
  return fail(`wrong type for value; expected ${GO_KIND[kind]}; got ${goTypeOf(v)}`);
}

const MISSING = Symbol("missing");

function evalOperand(host: SockaddrHost, op: Operand, dot: IfAddrs): Value {
  switch (op.kind) {
    case "string": case "number": case "bool":
      return op.value;
    case "dot":
      return dot;
    case "pipe":
      return evalPipeline(host, op.pipe, dot);
    case "ident":
      return callFunction(host, op.name, [], MISSING, dot, op.name);
  }
}

function callFunction(host: SockaddrHost, name: string, argOps: readonly Operand[], final: Value | typeof MISSING, dot: IfAddrs, source: string): Value {
  const fn = FUNCS[name]!;
  const got = argOps.length + (final === MISSING ? 0 : 1);
  if (got !== fn.params.length) fail(`at <${source}>: wrong number of args for ${name}: want ${fn.params.length} got ${got}`);
  const args: Value[] = [];
  try {
    argOps.forEach((op, i) => args.push(convert(fn.params[i]!, evalOperand(host, op, dot), op.kind === "string" || op.kind === "number" ? op : undefined)));
    if (final !== MISSING) args.push(convert(fn.params[fn.params.length - 1]!, final, undefined));
  } catch (err) {
    if (err instanceof SockaddrTemplateError && !err.message.startsWith("at <")) fail(`at <${source}>: ${err.message}`);
    throw err;
  }
  try {
    return fn.call(host, args);
  } catch (err) {
    if (err instanceof SockaddrError) return fail(`at <${source}>: error calling ${name}: ${err.message}`);
    throw err;
  }
}

function evalCommand(host: SockaddrHost, cmd: Command, dot: IfAddrs, final: Value | typeof MISSING): Value {
  const [first, ...rest] = cmd.operands as [Operand, ...Operand[]];
  if (first.kind === "ident") return callFunction(host, first.name, rest, final, dot, cmd.source);
  if (rest.length > 0 || final !== MISSING) fail(`at <${cmd.source}>: can't give argument to non-function ${cmd.source.split(/\s+/)[0]}`);
  return evalOperand(host, first, dot);
}

function evalPipeline(host: SockaddrHost, pipe: Pipeline, dot: IfAddrs): Value {
  let value: Value | typeof MISSING = MISSING;
  for (const cmd of pipe) value = evalCommand(host, cmd, dot, value);
  return value as Value;
}

/**
 * Evaluates a go-sockaddr template (go-sockaddr's template.Parse) over `host`. Text outside `{{ }}` is
 * kept; an action that finds nothing prints "" (as GetPrivateIP does on a host without a private
 * address), so callers decide whether an empty result is an error. Throws SockaddrTemplateError for a
 * syntax error, an unknown function, a wrong argument, or a function's own error (a bad regexp, an
 * unknown flag or RFC, no default route for GetDefaultInterfaces...).
 */
export function evaluateSockaddrTemplate(input: string, host: SockaddrHost): string {
  const nodes = parseTemplate(input, (name) => Object.hasOwn(FUNCS, name));
  let out = "";
  let dot: IfAddrs | undefined;
  for (const node of nodes) {
    if (node.kind === "text") out += node.text;
    else {
      try {
        dot ??= allInterfaces(host);
      } catch (err) {
        if (err instanceof SockaddrError) fail(`unable to query interface addresses: ${err.message}`);
        throw err;
      }
      out += printValue(evalPipeline(host, node.pipe, dot));
    }
  }
  return out;
}

/**
 * Why a template may have given "" on a host, by the functions it calls (for the error of a caller that
 * needs an address): GetInterfaceIP skips non-forwardable addresses, the Private/Public helpers need a
 * forwardable address on an interface that is up. "" when nothing specific can be said.
 */
export function emptyTemplateHint(template: string): string {
  if (/GetInterfaceIP\b/.test(template)) {
    return ' (GetInterfaceIP skips addresses that are not forwardable, such as loopback and link-local ones; GetInterfaceIPs or GetAllInterfaces | include "name" ... keeps them)';
  }
  if (/GetPrivateIP|GetPrivateInterfaces/.test(template)) return " (no forwardable RFC 6890 private address on an interface that is up; loopback and link-local addresses do not count)";
  if (/GetPublicIP|GetPublicInterfaces/.test(template)) return " (no forwardable address outside RFC 6890 on an interface that is up)";
  return "";
}
