/**
 * Decode + validate for the agent's registration endpoints and config files, with the messages
 * Consul's handlers answer with (agent/agent_endpoint.go AgentRegisterService / AgentRegisterCheck,
 * agent.validateService). Pure functions; every failure is an AgentError of kind "bad-request".
 */
import { GoError, isJsonObject, JsonReader } from "../lib/index.ts";
import { badRequest, multiError } from "./errors.ts";
import { decodeCheck, decodeService, type DecodedCheck, type DecodedService } from "./decode.ts";
import type { CheckRegistration, ServiceRegistration } from "./types.ts";
import {
  checkSizeError,
  isAnyAddress,
  isValidStatus,
  nodeServiceErrors,
  portRangeError,
  serviceSizeError,
  validateCheckType,
  validateServiceMeta,
  validateTaggedAddresses,
  validateWeights,
} from "./validate.ts";

const STATUS_MESSAGE = "Status for checks must 'passing', 'warning', 'critical'";

/**
 * Decodes and validates a `PUT /v1/agent/service/register` body (api.AgentServiceRegistration; PascalCase,
 * any letter case, or snake_case keys). Throws AgentError("bad-request") with Consul's message:
 * "Request decode failed: ...", "Missing service name", "Invalid service address", "Invalid Weights: ...",
 * "Invalid Service Meta: ...", NodeService validation (multierror text), "Invalid check: ...",
 * "Status for checks must ...", "Invalid check in sidecar_service: ...", "Invalid SidecarService: ...".
 */
export function parseServiceRegistration(body: unknown): ServiceRegistration {
  const decoded = decoding(() => decodeService(JsonReader.of(body, "ServiceDefinition")));
  validateDecodedService(decoded);
  return decoded.service;
}

/**
 * Decodes and validates a `PUT /v1/agent/check/register` body (api.AgentCheckRegistration: ID or CheckID,
 * Name, ServiceID, Notes, Status, TTL, HTTP, Header, Method, Body, TLSSkipVerify, TCP, Interval, Timeout,
 * DeregisterCriticalServiceAfter, Args/ScriptArgs, DockerContainerID, Shell, GRPC, GRPCUseTLS, AliasNode, AliasService, ...).
 * Whether this agent may run the check (script settings, Docker socket) is the agent's decision, not this one's. The check ID defaults to the name. Messages: "Request decode failed: ...",
 * "Missing check name", "Bad check status", "Invalid check: ...".
 */
export function parseCheckRegistration(body: unknown): CheckRegistration {
  const { decoded, serviceId } = decoding(() => {
    const r = JsonReader.of(body, "CheckDefinition");
    return { decoded: decodeCheck(r, ["ID", "CheckID"]), serviceId: r.str("ServiceID") };
  });
  if (decoded.check.Name === "") throw badRequest("Missing check name");
  const size = checkSizeError({ ...decoded.check, ServiceID: serviceId });
  if (size) throw badRequest(size);
  if (decoded.status !== "" && !isValidStatus(decoded.status)) throw badRequest("Bad check status");
  const err = checkError(decoded);
  if (err) throw badRequest(`Invalid check: ${err}`);
  return { ...decoded.check, CheckID: decoded.check.CheckID || decoded.check.Name, ServiceID: serviceId };
}

/** Runs a decode, answering the reader's GoError as Consul's handlers do: "Request decode failed: <Go's text>". */
function decoding<T>(decode: () => T): T {
  try {
    return decode();
  } catch (err) {
    if (err instanceof GoError) throw badRequest(`Request decode failed: ${err.message}`);
    throw err;
  }
}

function checkError(d: DecodedCheck): string | undefined {
  return validateCheckType(d.check);
}

function validateDecodedService(d: DecodedService): void {
  const s = d.service;
  if (s.Name === "") throw badRequest("Missing service name");
  const size = serviceSizeError(s) ?? (d.sidecar ? serviceSizeError(d.sidecar.service) : undefined)
    ?? portRangeError(s) ?? (d.sidecar ? portRangeError(d.sidecar.service, "Service.Connect.SidecarService") : undefined);
  if (size) throw badRequest(size);
  if (isAnyAddress(s.Address)) throw badRequest("Invalid service address");
  const weightsErr = s.Weights ? validateWeights(s.Weights) : undefined;
  if (weightsErr) throw badRequest(`Invalid Weights: ${weightsErr}`);
  const metaErr = validateServiceMeta(s.Kind, s.Meta);
  if (metaErr) throw badRequest(`Invalid Service Meta: ${metaErr}`);
  const nsErrors = nodeServiceErrors(s);
  if (nsErrors.length) throw badRequest(multiError(nsErrors));
  for (const c of d.checks) {
    const err = checkError(c);
    if (err) throw badRequest(`Invalid check: ${err}`);
  }
  if (d.checks.some((c) => c.status !== "" && !isValidStatus(c.status))) throw badRequest(STATUS_MESSAGE);
  if (d.sidecar) {
    for (const c of d.sidecar.checks) {
      const err = checkError(c);
      if (err) throw badRequest(`Invalid check in sidecar_service: ${err}`);
    }
    if (d.sidecar.checks.some((c) => c.status !== "" && !isValidStatus(c.status))) throw badRequest(STATUS_MESSAGE);
    const sc = d.sidecar.service;
    const scErr = validateServiceMeta(sc.Kind || "connect-proxy", sc.Meta) ??
      (sc.Weights ? validateWeights(sc.Weights) : undefined) ?? validateTaggedAddresses(sc.TaggedAddresses);
    if (scErr) throw badRequest(`Invalid SidecarService: ${scErr}`);
  }
  const taggedErr = validateTaggedAddresses(s.TaggedAddresses);
  if (taggedErr) throw badRequest(taggedErr);
}

/** Service and check registrations found in an agent config file. */
export interface ConfigDefinitions {
  readonly services: readonly ServiceRegistration[];
  readonly checks: readonly CheckRegistration[];
  /**
   * The ACL `token` of each definition ("" when it has none), by position in `services` and `checks`:
   * the definition is registered, synced and (for a proxy) watched with it, as Consul does.
   */
  readonly serviceTokens?: readonly string[];
  readonly checkTokens?: readonly string[];
}

/**
 * Turns the `service`, `services`, `check` and `checks` blocks of a JSON agent config (snake_case as in
 * Consul config files; PascalCase accepted too) into registrations, validated as the HTTP endpoints do.
 * Errors name the block: `services[1]: Missing service name`. Other config keys are ignored.
 */
export function definitionsFromConfig(config: unknown): ConfigDefinitions {
  if (!isJsonObject(config)) return { services: [], checks: [], serviceTokens: [], checkTokens: [] };
  const r = new JsonReader(config, "");
  const services: ServiceRegistration[] = [];
  const checks: CheckRegistration[] = [];
  const blocks = (single: string, plural: string) => {
    const out: { label: string; value: unknown }[] = [];
    const one = r.raw(single);
    if (one !== undefined) out.push({ label: single, value: one });
    const many = r.raw(plural);
    if (many !== undefined) {
      if (!Array.isArray(many)) throw badRequest(`${plural}: must be a list`);
      many.forEach((value, i) => out.push({ label: `${plural}[${i}]`, value }));
    }
    return out;
  };
  const serviceTokens: string[] = [];
  const checkTokens: string[] = [];
  /** A definition's `token` (or `Token`); anything but a string is refused with its label. */
  const tokenOf = (label: string, value: unknown): string => {
    const t = isJsonObject(value) ? (value.token ?? value.Token ?? "") : "";
    if (typeof t !== "string") throw badRequest(`${label}: token must be a string`);
    return t;
  };
  for (const { label, value } of blocks("service", "services")) {
    services.push(labelled(label, () => parseServiceRegistration(value)));
    serviceTokens.push(tokenOf(label, value));
  }
  for (const { label, value } of blocks("check", "checks")) {
    checks.push(labelled(label, () => parseCheckRegistration(value)));
    checkTokens.push(tokenOf(label, value));
  }
  return { services, checks, serviceTokens, checkTokens };
}

function labelled<T>(label: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw badRequest(`${label}: ${(err as Error).message}`);
  }
}
