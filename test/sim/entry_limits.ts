/**
 * Raft entry size limits in the simulation. The network carries at most FRAME_BYTES per message, like the
 * TCP transport's frame limit (src/consensus limits.ts): an entry a leader appended but no message can
 * carry never replicates and wedges every later write, which the liveness phase would report. Servers
 * refuse entries over ENTRY_BYTES; in some runs one server is "older or misconfigured" with the larger
 * MISCONFIGURED_ENTRY_BYTES (its MsgApps still fit a frame), so the leader's own check and its answer to
 * a refused forwarded proposal are exercised under faults. Clients now and then propose a padded put of
 * a size drawn from (ENTRY_BYTES, MISCONFIGURED_ENTRY_BYTES] or beyond a frame.
 */
import { encodeMessage, type Transport } from "../../src/consensus/index.ts";
import { entryPayloadSize, type Message } from "../../src/raft/index.ts";
import type { Rng } from "../../src/platform/index.ts";
import type { KvCommand } from "../harness/kv_state_machine.ts";

export const ENTRY_BYTES = 32 * 1024;
export const MISCONFIGURED_ENTRY_BYTES = 48 * 1024;
/** Above max(maxSizePerMsg = 64 KiB, MISCONFIGURED_ENTRY_BYTES) plus per-entry framing. */
export const FRAME_BYTES = 96 * 1024;
/** Share of client writes that are oversized. */
export const OVERSIZED_SHARE = 0.05;

/** `t`, dropping (as the TCP transport does) a message whose encoding exceeds FRAME_BYTES. */
export function frameLimited(t: Transport, onDrop: () => void): Transport {
  const payload = (m: Message) => (m.type === "MsgApp" || m.type === "MsgProp" ? m.entries.reduce((n, e) => n + entryPayloadSize(e), 0) : 0);
  return {
    ...t,
    send(m) {
      // Encoding is exact but costs; only messages near the limit are measured.
      if (payload(m) > FRAME_BYTES - 16 * 1024 && encodeMessage(m).length > FRAME_BYTES) {
        onDrop();
        return;
      }
      t.send(m);
    },
  };
}

/** The log bytes of `command` padded (with a field the state machine ignores) so that its Raft entry is `entryBytes`. */
export function paddedCommand(command: KvCommand, entryBytes: number): Uint8Array {
  const base = JSON.stringify({ ...command, pad: "" }).length + 16;
  return new TextEncoder().encode(JSON.stringify({ ...command, pad: "x".repeat(Math.max(0, entryBytes - base)) }));
}

/** The entry size of an oversized write: past the normal limit (and maybe a misconfigured server's), or past a frame. */
export function oversizedEntryBytes(rng: Rng): number {
  return rng.next() < 0.6 ? ENTRY_BYTES + 1 + rng.int(MISCONFIGURED_ENTRY_BYTES - ENTRY_BYTES) : FRAME_BYTES + 1 + rng.int(32 * 1024);
}
