/**
 * Leader routine: aborts a staged restore that stopped making progress (src/state restore_staging.ts).
 * The server that proposes a restore sends its chunks back to back, each within the proposal timeout, and
 * aborts on its own failures; a staging whose last chunk is older than STAGED_RESTORE_IDLE_MS belongs to a
 * proposer that crashed or lost its client, so its chunks would otherwise stay in every server's memory
 * and snapshots until the next restore. Checked every STAGED_RESTORE_IDLE_MS by the staging's last Raft
 * index: one unchanged between two checks is aborted (so after 1 to 2 intervals without a chunk).
 */
import type { Cancel, Clock } from "../platform/index.ts";
import type { StagedRestoreInfo } from "../state/index.ts";
import type { DutyProposer, LeaderRoutine } from "./leader_routines.ts";

/** How long a staged restore may sit without a new chunk before the leader aborts it. */
export const STAGED_RESTORE_IDLE_MS = 60_000;

export function stagedRestoreGcRoutine(o: { clock: Clock; proposeDuty: DutyProposer; staged: () => StagedRestoreInfo | undefined }): LeaderRoutine {
  let cancel: Cancel | undefined;
  let seen: string | undefined;
  const check = () => {
    const s = o.staged();
    const key = s && `${s.id}@${s.lastIndex}`;
    // Unchanged since the last check, a whole interval ago.
    if (s && key === seen) void o.proposeDuty("aborting an abandoned restore", { type: "restore-stage", op: "abort", id: s.id });
    seen = key;
    cancel = o.clock.setTimer(STAGED_RESTORE_IDLE_MS, check);
  };
  return {
    name: "staged restore clean-up",
    start() {
      seen = undefined;
      cancel = o.clock.setTimer(STAGED_RESTORE_IDLE_MS, check);
    },
    stop() {
      cancel?.();
      cancel = undefined;
    },
  };
}
