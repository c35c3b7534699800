import type { Hono } from "hono";
import type { AgentInfo, CoordinateApi, MembershipApi } from "./deps.ts";
import { memberBody } from "./members.ts";
import { jsonResponse } from "./respond.ts";

/** Serf member status codes as Consul reports them (`serf.MemberStatus`). */
const MEMBER_STATUS_ALIVE = 1;

/**
 * GET /v1/agent/self: the agent's configuration and member record in Consul's shape
 * (https://developer.hashicorp.com/consul/api-docs/agent#read-configuration).
 */
/**
 * `/v1/agent/self`. `Member` is exactly the object `/v1/agent/members` lists for this agent (Consul's
 * Agent.LocalMember), protocol and delegate versions included; without gossip, the agent's own facts.
 */
export function agentSelfBody(agent: AgentInfo, membership?: MembershipApi, coordinates?: CoordinateApi): Record<string, unknown> {
  const self = membership?.members(false).find((m) => m.name === agent.nodeName);
  return {
    Config: {
      Datacenter: agent.datacenter,
      PrimaryDatacenter: agent.primaryDatacenter || agent.datacenter,
      NodeName: agent.nodeName,
      NodeID: agent.nodeId,
      Revision: agent.revision,
      Server: agent.server,
      Version: agent.version,
    },
    // Consul's Self.Coord: the LAN coordinate of the agent's segment, null with coordinates disabled.
    Coord: coordinates?.enabled ? (coordinates.lan() ?? null) : null,
    DebugConfig: agent.debugConfig,
    Member: self ? memberBody(self) : {
      Name: agent.nodeName,
      Addr: agent.advertiseAddr,
      Port: agent.serfLanPort,
      Tags: memberTags(agent),
      Status: MEMBER_STATUS_ALIVE,
    },
    Meta: { ...agent.nodeMeta },
    Stats: agent.stats(),
  };
}

/** The serf tags this agent advertises (Consul's `role`, `dc`, `id`, `port`, `build` tags). */
function memberTags(agent: AgentInfo): Record<string, string> {
  const tags: Record<string, string> = { role: agent.server ? "consul" : "node", dc: agent.datacenter, id: agent.nodeId, build: agent.version };
  if (agent.server) tags.port = String(agent.serverPort);
  return tags;
}

export function mountAgent(app: Hono, agent: AgentInfo, membership?: MembershipApi, coordinates?: CoordinateApi): void {
  app.get("/v1/agent/self", (c) => jsonResponse(c, agentSelfBody(agent, membership, coordinates)));
}
