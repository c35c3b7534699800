/**
 * Shapes of the agent's read endpoints: `/v1/agent/services`, `/v1/agent/service/:id` and
 * `/v1/agent/checks` (Consul 1.8 agent_endpoint.go buildAgentService and AgentChecks).
 */
import type { LocalCheck, LocalService } from "./local_state.ts";
import { canonical } from "./same.ts";
import type { AgentCheck, AgentService } from "./types.ts";

/** One service as the agent endpoints render it: Tags and Meta never null, Proxy only for proxies and gateways. */
export function toAgentService(s: LocalService): AgentService {
  const kind = s.Kind ?? "";
  const weights = { Passing: s.Weights.Passing > 0 ? s.Weights.Passing : 1, Warning: s.Weights.Warning };
  return {
    ...(kind ? { Kind: kind } : {}),
    ID: s.ID,
    Service: s.Service,
    Tags: s.Tags ? [...s.Tags] : [],
    Meta: s.Meta ? { ...s.Meta } : {},
    Port: s.Port,
    Address: s.Address,
    ...(s.TaggedAddresses && Object.keys(s.TaggedAddresses).length ? { TaggedAddresses: { ...s.TaggedAddresses } } : {}),
    Weights: weights,
    EnableTagOverride: s.EnableTagOverride,
    ...(kind !== "" ? { Proxy: s.Proxy } : {}),
    ...(s.Connect.Native ? { Connect: { Native: true } } : {}),
  };
}

/** The `/v1/agent/service/:id` shape: toAgentService plus ContentHash, which changes whenever the service does. */
export function toAgentServiceWithHash(s: LocalService): AgentService {
  const view = toAgentService(s);
  return { ...view, ContentHash: contentHash(view) };
}

/** One check as `/v1/agent/checks` renders it (ServiceTags never null, indexes 0). */
export function toAgentCheck(c: LocalCheck): AgentCheck {
  return {
    Node: c.Node,
    CheckID: c.CheckID,
    Name: c.Name,
    Status: c.Status,
    Notes: c.Notes,
    Output: c.Output,
    ServiceID: c.ServiceID,
    ServiceName: c.ServiceName,
    ServiceTags: c.ServiceTags ? [...c.ServiceTags] : [],
    Type: c.Type,
    Definition: c.Definition,
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/**
 * A 16-hex-digit FNV-1a 64 hash of a value's canonical JSON (sorted keys, zero values dropped), the
 * shape of Consul's hashstructure-based ContentHash; equal values give equal hashes.
 */
export function contentHash(value: unknown): string {
  const text = JSON.stringify(canonical(value) ?? null);
  let h = 0xcbf29ce484222325n;
  const bytes = new TextEncoder().encode(text);
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h.toString(16).padStart(16, "0");
}
