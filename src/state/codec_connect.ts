/**
 * Shape checks for the Connect commands (config-entry, intention, ca). Each decoder takes the parsed
 * command object, checks every field the store or its readers rely on (presence and type of the wire
 * type's required fields, types of the optional ones, known verbs and kinds) and returns it as a
 * StateCommand, or throws StateCommandError naming the path. Unknown extra fields pass through untouched
 * (as in the other commands). Semantic checks (duplicates, one active root) are the store's.
 */
import { StateCommandError, type StateCommand } from "./commands.ts";
import { checkRequired, checkShape, isObj, objArray, reqIndex, reqStr, type Obj } from "./codec_shapes.ts";

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

/** The kinds src/connect/config_entries knows (CONFIG_ENTRY_KINDS; this layer may not import it). */
const ENTRY_KINDS: ReadonlySet<string> = new Set(["service-defaults", "proxy-defaults", "service-router", "service-splitter", "service-resolver"]);

function obj(o: Obj, k: string, path: string): Obj {
  const v = o[k];
  if (!isObj(v)) bad(`${path}.${k}`, "must be an object");
  return v;
}

/** A config entry as a command (or a snapshot) carries it. */
export function configEntryShape(v: unknown, path: string): void {
  if (!isObj(v)) bad(path, "must be an object");
  reqStr(v, "Kind", path);
  if (!ENTRY_KINDS.has(v.Kind as string)) bad(`${path}.Kind`, `${JSON.stringify(v.Kind)} is not a config entry kind`);
  reqStr(v, "Name", path);
  checkShape(v, path, { Meta: "strMap", CreateIndex: "num", ModifyIndex: "num" });
  switch (v.Kind) {
    case "service-defaults":
    case "proxy-defaults": {
      if (v.Kind === "service-defaults") {
        checkRequired(v, path, { Protocol: "str" });
        checkShape(v, path, { ExternalSNI: "str" });
      } else {
        checkShape(v, path, { Config: "obj" });
      }
      checkShape(obj(v, "MeshGateway", path), `${path}.MeshGateway`, { Mode: "str" });
      const expose = obj(v, "Expose", path);
      checkShape(expose, `${path}.Expose`, { Checks: "bool" });
      if (expose.Paths !== undefined) objArray(expose, "Paths", `${path}.Expose`);
      return;
    }
    case "service-router":
      objArray(v, "Routes", path).forEach((r, i) => checkShape(r, `${path}.Routes[${i}]`, { Match: "obj", Destination: "obj" }));
      return;
    case "service-splitter":
      objArray(v, "Splits", path).forEach((s, i) => {
        checkRequired(s, `${path}.Splits[${i}]`, { Weight: "num" });
        checkShape(s, `${path}.Splits[${i}]`, { Service: "str", ServiceSubset: "str", Namespace: "str" });
      });
      return;
    case "service-resolver":
      checkShape(v, path, { DefaultSubset: "str", Subsets: "obj", Redirect: "obj", Failover: "obj", ConnectTimeout: "str" });
      return;
  }
}

/** A `config-entry` command. */
export function decodeConfigEntryCommand(raw: Obj): StateCommand {
  switch (raw.op) {
    case "set":
      configEntryShape(raw.entry, "config-entry.entry");
      return raw as unknown as StateCommand;
    case "cas":
      configEntryShape(raw.entry, "config-entry.entry");
      reqIndex(raw, "index", "config-entry");
      return raw as unknown as StateCommand;
    case "delete":
      reqStr(raw, "kind", "config-entry");
      reqStr(raw, "name", "config-entry");
      return raw as unknown as StateCommand;
    default:
      return bad("config-entry.op", "must be set, cas or delete");
  }
}

/** An `intention` command. Meta may be null or absent (the store stores {}). */
export function decodeIntentionCommand(raw: Obj): StateCommand {
  if (raw.op === "delete") {
    reqStr(raw, "id", "intention");
    return raw as unknown as StateCommand;
  }
  if (raw.op !== "upsert") bad("intention.op", "must be upsert or delete");
  intentionShape(raw.intention, "intention.intention");
  return raw as unknown as StateCommand;
}

/** An intention as a command (or a snapshot) carries it. */
export function intentionShape(x: unknown, path: string): void {
  if (!isObj(x)) bad(path, "must be an object");
  checkRequired(x, path, {
    ID: "str", Description: "str", SourceNS: "str", SourceName: "str", DestinationNS: "str", DestinationName: "str",
    SourceType: "str", Action: "str", DefaultAddr: "str", DefaultPort: "num", Precedence: "num",
    CreatedAt: "str", UpdatedAt: "str", Hash: "str",
  });
  if (x.Action !== "allow" && x.Action !== "deny") bad(`${path}.Action`, "must be allow or deny");
  checkShape(x, path, { Meta: "strMap", CreateIndex: "num", ModifyIndex: "num" });
}

/** A CA configuration as a command (or a snapshot) carries it. */
export function caConfigShape(v: unknown, path: string): void {
  if (!isObj(v)) bad(path, "must be an object");
  checkRequired(v, path, { ClusterID: "str", Provider: "str" });
  if (v.Provider !== "consul") bad(`${path}.Provider`, 'must be "consul"');
  checkShape(v, path, { CreateIndex: "num", ModifyIndex: "num" });
  const c = obj(v, "Config", path);
  checkRequired(c, `${path}.Config`, { LeafCertTTL: "str", RotationPeriod: "str", IntermediateCertTTL: "str" });
  checkShape(c, `${path}.Config`, { PrivateKey: "str", RootCert: "str", IntermediateCert: "str" });
}

/** A `ca` command. */
export function decodeCaCommand(raw: Obj): StateCommand {
  if (raw.op === "set-config") {
    caConfigShape(raw.config, "ca.config");
    return raw as unknown as StateCommand;
  }
  if (raw.op !== "set-roots") bad("ca.op", "must be set-config or set-roots");
  objArray(raw, "roots", "ca").forEach((r, i) => caRootShape(r, `ca.roots[${i}]`));
  if (raw.config !== undefined) caConfigShape(raw.config, "ca.config");
  reqIndex(raw, "index", "ca");
  return raw as unknown as StateCommand;
}

/** A CA root as a command (or a snapshot) carries it. */
export function caRootShape(r: unknown, path: string): void {
  if (!isObj(r)) bad(path, "must be an object");
  checkRequired(r, path, {
    ID: "str", Name: "str", SerialNumber: "num", SigningKeyID: "str", ExternalTrustDomain: "str", NotBefore: "str",
    NotAfter: "str", RootCert: "str", IntermediateCerts: "strArr", Active: "bool", PrivateKeyType: "str", PrivateKeyBits: "num",
  });
  checkShape(r, path, { CreateIndex: "num", ModifyIndex: "num" });
}
