/**
 * Test fixtures of the Connect CA: an in-memory CA state with the store's set-roots (CAS on the roots
 * index) and set-config semantics, recording every proposal.
 */
import type { CARoot } from "../connect/index.ts";
import type { StateCommand, StateResult } from "../state/index.ts";
import type { CaSnapshot } from "./connect_ca.ts";

export function fakeCaState() {
  let state: CaSnapshot = { index: 0, roots: [], config: null };
  let raft = 10;
  const proposed: StateCommand[] = [];
  const propose = async (cmd: StateCommand): Promise<StateResult> => {
    proposed.push(cmd);
    raft++;
    if (cmd.type !== "ca") throw new Error("unexpected command");
    if (cmd.op === "set-config") {
      state = { ...state, config: { ...cmd.config, ModifyIndex: raft } };
      return { type: "ok" };
    }
    if (cmd.op !== "set-roots") throw new Error("unexpected op");
    if (cmd.index !== state.index) return { type: "cas", ok: false };
    const roots: CARoot[] = cmd.roots.map((r) => ({ ...r, ModifyIndex: raft }));
    state = { index: raft, roots, config: cmd.config ? { ...cmd.config, ModifyIndex: raft } : state.config };
    return { type: "cas", ok: true };
  };
  return { read: () => state, propose, proposed, barrier: async () => {} };
}
