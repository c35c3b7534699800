import { ConfChangeError } from "./errors.ts";
import { Progress } from "./progress.ts";
import type { ProgressMap, TrackerConfig } from "./tracker.ts";
import { cloneConfig, isJoint } from "./tracker.ts";
import type { ConfChangeSingle, ConfState } from "./types.ts";
import { sortedIds } from "./types.ts";

/** A new configuration and progress map; applied by the core with switchToConfig. */
export interface ConfigAndProgress {
  readonly config: TrackerConfig;
  readonly progress: ProgressMap;
}

/**
 * Computes configuration transitions (etcd confchange.Changer) without mutating its inputs.
 * `lastIndex` seeds the Progress of added peers. All methods throw ConfChangeError on invalid changes.
 */
export class Changer {
  constructor(
    private readonly config: TrackerConfig,
    private readonly progress: ProgressMap,
    private readonly maxInflight: number,
    private readonly lastIndex: number,
  ) {}

  /**
   * Enters a joint configuration (Raft thesis §4.3): the current voters become the outgoing half and
   * the changes are applied to the incoming half. With `autoLeave`, the leader proposes the leave
   * automatically once the entry is applied.
   */
  enterJoint(autoLeave: boolean, ccs: readonly ConfChangeSingle[]): ConfigAndProgress {
    const { config, progress } = this.checkAndCopy();
    if (isJoint(config)) throw new ConfChangeError("config is already joint");
    if (config.voters[0].size === 0) throw new ConfChangeError("can't make a zero-voter config joint");
    config.voters[1] = new Set(config.voters[0]);
    this.apply(config, progress, ccs);
    config.autoLeave = autoLeave;
    return checkAndReturn(config, progress);
  }

  /** Leaves the joint configuration: drops the outgoing half, turns learnersNext into learners. */
  leaveJoint(): ConfigAndProgress {
    const { config, progress } = this.checkAndCopy();
    if (!isJoint(config)) throw new ConfChangeError("can't leave a non-joint config");
    for (const id of config.learnersNext) {
      config.learners.add(id);
      progress.get(id)!.isLearner = true;
    }
    config.learnersNext = new Set();
    for (const id of config.voters[1]) {
      if (!config.voters[0].has(id) && !config.learners.has(id)) progress.delete(id);
    }
    config.voters[1] = new Set();
    config.autoLeave = false;
    return checkAndReturn(config, progress);
  }

  /** Applies changes that alter at most one voter (one-server change, Raft thesis §4.1). */
  simple(ccs: readonly ConfChangeSingle[]): ConfigAndProgress {
    const { config, progress } = this.checkAndCopy();
    if (isJoint(config)) throw new ConfChangeError("can't apply simple config change in joint config");
    this.apply(config, progress, ccs);
    const before = this.config.voters[0];
    let diff = 0;
    for (const id of before) if (!config.voters[0].has(id)) diff++;
    for (const id of config.voters[0]) if (!before.has(id)) diff++;
    if (diff > 1) throw new ConfChangeError("more than one voter changed without entering joint config");
    return checkAndReturn(config, progress);
  }

  private apply(cfg: TrackerConfig, prs: ProgressMap, ccs: readonly ConfChangeSingle[]): void {
    for (const cc of ccs) {
      if (cc.nodeId === "") continue; // etcd: a zeroed ID means "not applied"
      switch (cc.type) {
        case "AddNode": this.makeVoter(cfg, prs, cc.nodeId); break;
        case "AddLearnerNode": this.makeLearner(cfg, prs, cc.nodeId); break;
        case "RemoveNode": this.remove(cfg, prs, cc.nodeId); break;
      }
    }
    if (cfg.voters[0].size === 0) throw new ConfChangeError("removed all voters");
  }

  private makeVoter(cfg: TrackerConfig, prs: ProgressMap, id: string): void {
    const pr = prs.get(id);
    if (!pr) {
      this.initProgress(cfg, prs, id, false);
      return;
    }
    pr.isLearner = false;
    cfg.learners.delete(id);
    cfg.learnersNext.delete(id);
    cfg.voters[0].add(id);
  }

  private makeLearner(cfg: TrackerConfig, prs: ProgressMap, id: string): void {
    const pr = prs.get(id);
    if (!pr) {
      this.initProgress(cfg, prs, id, true);
      return;
    }
    if (pr.isLearner) return;
    // Remove as a voter of the incoming config but keep the Progress.
    this.remove(cfg, prs, id);
    prs.set(id, pr);
    // Still a voter in the outgoing config: becomes a learner only when leaving the joint config.
    if (cfg.voters[1].has(id)) {
      cfg.learnersNext.add(id);
    } else {
      pr.isLearner = true;
      cfg.learners.add(id);
    }
  }

  private remove(cfg: TrackerConfig, prs: ProgressMap, id: string): void {
    if (!prs.has(id)) return;
    cfg.voters[0].delete(id);
    cfg.learners.delete(id);
    cfg.learnersNext.delete(id);
    // A voter of the outgoing config keeps its Progress until the joint config is left.
    if (!cfg.voters[1].has(id)) prs.delete(id);
  }

  private initProgress(cfg: TrackerConfig, prs: ProgressMap, id: string, isLearner: boolean): void {
    if (isLearner) cfg.learners.add(id);
    else cfg.voters[0].add(id);
    // Probe from the last index; recently active so CheckQuorum doesn't fire before it had a chance to
    // respond (etcd behaviour).
    prs.set(id, new Progress(Math.max(this.lastIndex, 1), this.maxInflight, isLearner, true));
  }

  private checkAndCopy(): { config: TrackerConfig; progress: ProgressMap } {
    const config = cloneConfig(this.config);
    const progress: ProgressMap = new Map();
    for (const [id, pr] of this.progress) progress.set(id, pr.clone());
    checkInvariants(config, progress);
    return { config, progress };
  }
}

function checkAndReturn(config: TrackerConfig, progress: ProgressMap): ConfigAndProgress {
  checkInvariants(config, progress);
  return { config, progress };
}

/** Structural invariants of a configuration (etcd confchange.checkInvariants). */
export function checkInvariants(cfg: TrackerConfig, prs: ProgressMap): void {
  for (const set of [cfg.voters[0], cfg.voters[1], cfg.learners, cfg.learnersNext]) {
    for (const id of set) if (!prs.has(id)) throw new ConfChangeError(`no progress for ${id}`);
  }
  for (const id of cfg.learnersNext) {
    if (!cfg.voters[1].has(id)) throw new ConfChangeError(`${id} is in LearnersNext, but not Voters[1]`);
    if (prs.get(id)!.isLearner) throw new ConfChangeError(`${id} is in LearnersNext, but is already marked as learner`);
  }
  for (const id of cfg.learners) {
    if (cfg.voters[0].has(id) || cfg.voters[1].has(id)) throw new ConfChangeError(`${id} is in Learners and Voters`);
    if (!prs.get(id)!.isLearner) throw new ConfChangeError(`${id} is in Learners, but is not marked as learner`);
  }
  if (!isJoint(cfg)) {
    if (cfg.learnersNext.size > 0) throw new ConfChangeError("cfg.LearnersNext must be empty when not joint");
    if (cfg.autoLeave) throw new ConfChangeError("AutoLeave must be false when not joint");
  }
}

/**
 * Rebuilds a configuration from a persisted ConfState (etcd confchange.Restore) by replaying it as a
 * sequence of changes starting from an empty config: first the outgoing voters one by one, then (if
 * joint) entering the joint config with the incoming voters and learners.
 */
export function restoreConfig(cs: ConfState, maxInflight: number, lastIndex: number): ConfigAndProgress {
  const out: ConfChangeSingle[] = [];
  const inc: ConfChangeSingle[] = [];
  for (const id of cs.votersOutgoing) out.push({ type: "AddNode", nodeId: id });
  for (const id of cs.votersOutgoing) inc.push({ type: "RemoveNode", nodeId: id });
  for (const id of cs.voters) inc.push({ type: "AddNode", nodeId: id });
  for (const id of cs.learners) inc.push({ type: "AddLearnerNode", nodeId: id });
  for (const id of cs.learnersNext) inc.push({ type: "AddLearnerNode", nodeId: id });

  let cur: ConfigAndProgress = {
    config: { voters: [new Set(), new Set()], autoLeave: false, learners: new Set(), learnersNext: new Set() },
    progress: new Map(),
  };
  const changer = () => new Changer(cur.config, cur.progress, maxInflight, lastIndex);
  if (out.length === 0) {
    for (const cc of inc) cur = changer().simple([cc]);
  } else {
    for (const cc of out) cur = changer().simple([cc]);
    cur = changer().enterJoint(cs.autoLeave, inc);
  }
  return cur;
}

/** Compares two ConfStates (sorted lists) for equality. */
export function confStatesEqual(a: ConfState, b: ConfState): boolean {
  const eq = (x: readonly string[], y: readonly string[]) => {
    const sx = sortedIds(x), sy = sortedIds(y);
    return sx.length === sy.length && sx.every((v, i) => v === sy[i]);
  };
  return eq(a.voters, b.voters) && eq(a.votersOutgoing, b.votersOutgoing) && eq(a.learners, b.learners) &&
    eq(a.learnersNext, b.learnersNext) && a.autoLeave === b.autoLeave;
}
