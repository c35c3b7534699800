/**
 * The local agent's catalog (its anti-entropy CatalogPort) over the replicated state: the same reads
 * and writes the HTTP API makes, so a client agent syncs through a server like any other caller.
 */
import type { CatalogPort } from "../agent/index.ts";
import type { ReadOptions, StateAccess } from "../http/index.ts";
import type { StateCommand } from "../state/index.ts";

/**
 * `agentToken()`: what anti-entropy reads and writes with now (Consul's `acl.tokens.agent`, falling
 * back to the default token when empty; "" leaves the choice to `state`).
 */
export function catalogPortOver(state: StateAccess, agentToken: () => string = () => ""): CatalogPort {
  const read = (): ReadOptions => ({ datacenter: undefined, consistency: "default", minIndex: 0, maxWaitMs: 0, ...(agentToken() ? { token: agentToken() } : {}) });
  /** undefined: the agent token; "": the default token (which `state` supplies for undefined). */
  const write = async (command: StateCommand, token: string | undefined) => {
    const result = await state.write(command, undefined, (token === undefined ? agentToken() : token) || undefined);
    if (result.type === "error") throw new Error(result.error);
  };
  return {
    async nodeServices(node) {
      const { value, meta } = await state.read({ type: "catalog-node-services", node }, read());
      return value ? { index: meta.index, node: value.Node, services: Object.values(value.Services) } : undefined;
    },
    async nodeChecks(node) {
      return (await state.read({ type: "health-node-checks", node }, read())).value;
    },
    register: (req, token) => write({ type: "register", req }, token),
    deregister: (req, token) => write({ type: "deregister", req }, token),
  };
}
