/**
 * Shape checks for the `federation-state` command and the snapshot's federation-state rows. A state has a
 * Datacenter string, an RFC 3339 UpdatedAt, a PrimaryModifyIndex (a non-negative safe integer: indexes
 * are exact in the log, and one past 2^53 arrives as a bigint and is refused), and MeshGateways absent,
 * null or an array of CheckServiceNodes ({Node, Service, Checks}) with the same field checks as catalog
 * registrations. Throws StateCommandError naming the path; returns exactly the state's fields in Consul's
 * JSON order, MeshGateways left out when empty (omitempty) and a null Checks list as [].
 */
import { isRfc3339, type CheckServiceNode, type FederationState, type FederationStateWrite } from "../model/index.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";
import { checkRequired, checkShape, healthCheckShape, isObj, reqIndex, reqStr, serviceShape, type Obj } from "./codec_shapes.ts";

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

/** One gateway instance with its node and checks. */
function checkServiceNodeShape(v: unknown, path: string): CheckServiceNode {
  if (!isObj(v)) bad(path, "must be an object");
  const node = v.Node;
  if (!isObj(node)) bad(`${path}.Node`, "must be an object");
  checkRequired(node, `${path}.Node`, { ID: "str", Node: "str", Address: "str", Datacenter: "str" });
  checkShape(node, `${path}.Node`, { TaggedAddresses: "strMap", Meta: "strMap", CreateIndex: "num", ModifyIndex: "num" });
  serviceShape(v.Service, `${path}.Service`);
  checkRequired(v.Service as Obj, `${path}.Service`, { ID: "str", Service: "str" });
  const checks = v.Checks ?? [];
  if (!Array.isArray(checks)) bad(`${path}.Checks`, "must be an array or null");
  checks.forEach((c: unknown, i: number) => {
    healthCheckShape(c, `${path}.Checks[${i}]`);
    checkRequired(c, `${path}.Checks[${i}]`, { Node: "str", CheckID: "str", Status: "str" });
  });
  return { Node: node, Service: v.Service, Checks: checks } as unknown as CheckServiceNode;
}

/** A federation state as a command carries it (`stored` false: Raft indexes dropped) or a snapshot row (`stored`: required). */
export function federationStateShape(v: unknown, path: string, stored: true): FederationState;
export function federationStateShape(v: unknown, path: string, stored: false): FederationStateWrite;
export function federationStateShape(v: unknown, path: string, stored: boolean): FederationState | FederationStateWrite {
  if (!isObj(v)) bad(path, "must be an object");
  reqStr(v, "Datacenter", path);
  reqStr(v, "UpdatedAt", path);
  if (!isRfc3339(v.UpdatedAt as string)) bad(`${path}.UpdatedAt`, "must be an RFC 3339 time");
  const primary = reqIndex(v, "PrimaryModifyIndex", path);
  const raw = v.MeshGateways ?? [];
  if (!Array.isArray(raw)) bad(`${path}.MeshGateways`, "must be an array or null");
  const gateways = raw.map((g: unknown, i: number) => checkServiceNodeShape(g, `${path}.MeshGateways[${i}]`));
  const state: FederationStateWrite = {
    Datacenter: v.Datacenter as string,
    ...(gateways.length > 0 ? { MeshGateways: gateways } : {}),
    UpdatedAt: v.UpdatedAt as string,
    PrimaryModifyIndex: primary,
  };
  if (!stored) return state;
  return { ...state, CreateIndex: reqIndex(v, "CreateIndex", path), ModifyIndex: reqIndex(v, "ModifyIndex", path) };
}

/** A `federation-state` command. */
export function decodeFederationStateCommand(raw: Obj): StateCommand {
  const cas = raw.cas === undefined ? {} : { cas: reqIndex(raw, "cas", "federation-state") };
  if (raw.op === "delete") {
    reqStr(raw, "datacenter", "federation-state");
    return { type: "federation-state", op: "delete", datacenter: raw.datacenter as string, ...cas };
  }
  if (raw.op !== "upsert") bad("federation-state.op", "must be upsert or delete");
  return { type: "federation-state", op: "upsert", state: federationStateShape(raw.state, "federation-state.state", false), ...cas };
}
