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
