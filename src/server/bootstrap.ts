/**
 * bootstrap_expect (Consul's maybeBootstrap): a server with an empty Raft log bootstraps a new cluster
 * once enough servers are alive in the LAN pool and none of them belongs to a cluster already. Runs on
 * every server (there is no leader yet) until this server is part of a cluster.
 */
import type { ConsensusNode } from "../consensus/index.ts";
import type { Logger } from "../platform/index.ts";
import { decideBootstrap } from "./raft_membership.ts";
import type { ServerDirectory } from "./server_directory.ts";

/** What another server said when asked for its Raft peers. */
export type PeersAnswer = "has-cluster" | "empty" | "unreachable";

export interface Bootstrapper {
  /** Checks once whether to bootstrap now; concurrent calls while one runs return at once. */
  check(): Promise<void>;
}

export function createBootstrapper(o: {
  expect: number;
  nodeId: string;
  directory: ServerDirectory;
  consensus: ConsensusNode<unknown>;
  /** Asks server `node` of this datacenter whether it has a Raft configuration. */
  askPeers: (node: string) => Promise<PeersAnswer>;
  logger: Logger;
  /** True when this server needs no bootstrap (-dev, bootstrap_expect = 1). */
  bootstrapped: boolean;
}): Bootstrapper {
  let bootstrapped = o.bootstrapped;
  let checking = false;
  const log = o.logger;

  const maybeBootstrap = async () => {
    const st = o.consensus.status();
    if (st.lastIndex > 0 || st.term > 0) {
      bootstrapped = true; // this server already belongs to a cluster
      return;
    }
    const seen = o.directory.seen();
    const d = decideBootstrap(o.expect, o.nodeId, seen);
    if (d.kind === "refuse") log.error("not bootstrapping", { reason: d.reason });
    if (d.kind !== "bootstrap") return;
    // Never start a second cluster: ask every other server for its Raft peers first; if any has a
    // configuration already, it will bring us in instead.
    const others = seen.filter((x) => x.status === "alive" && x.id !== o.nodeId);
    const answers = await Promise.all(others.map((x) => o.askPeers(x.name)));
    if (answers.includes("has-cluster")) {
      bootstrapped = true;
      log.info("not bootstrapping: another server already belongs to a cluster, which will add this one");
      return;
    }
    if (answers.includes("unreachable")) {
      log.debug("not bootstrapping yet: some servers did not answer a peers query");
      return;
    }
    bootstrapped = true;
    const did = await o.consensus.bootstrap(d.voters);
    log.info(did ? "bootstrapped from gossip" : "joined an existing cluster instead of bootstrapping", { voters: d.voters.join(",") });
  };

  return {
    async check() {
      if (bootstrapped || checking || o.expect <= 1) return;
      checking = true;
      try {
        await maybeBootstrap();
      } finally {
        checking = false;
      }
    },
  };
}
