/** A user event in Consul's JSON shape (agent.UserEvent); Payload is raw bytes here (base64 in JSON). */
export interface UserEventView {
  readonly ID: string;
  readonly Name: string;
  readonly Payload: Uint8Array | null;
  readonly NodeFilter: string;
  readonly ServiceFilter: string;
  readonly TagFilter: string;
  readonly Version: number;
  readonly LTime: number;
}

/**
 * Consul's uuidToUint64: the blocking index of an event list is derived from its newest ID, as the XOR of
 * the ID's first 16 and last 16 hex digits read as big-endian uint64s (all 64 bits: `consul watch
 * -type event` finds the last event it saw by computing the same from the IDs). 0 for a malformed ID.
 */
export function eventIndex(id: string): bigint {
  const hex = id.replace(/-/g, "");
  if (!/^[0-9a-f]{32}$/i.test(hex)) return 0n;
  return BigInt(`0x${hex.slice(0, 16)}`) ^ BigInt(`0x${hex.slice(16)}`);
}

/** The index of an empty list: not 0, so that a blocking client waits instead of looping (Consul's EventList). */
export const EMPTY_EVENT_LIST_INDEX = 1n;

/** The index of a list of events as the client sees it (Consul's EventList computes it after ACL filtering). */
export function eventListIndex(events: readonly UserEventView[]): bigint {
  return events.length ? eventIndex(events[events.length - 1]!.ID) : EMPTY_EVENT_LIST_INDEX;
}
