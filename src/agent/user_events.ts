/**
 * Consul's user events (agent/user_event.go): `/v1/event/fire` gossips an event to every agent of the
 * datacenter's LAN pool; each agent keeps the last 256 events that pass its filters (node name,
 * service and tag regular expressions against its own registrations) for `/v1/event/list`, whose
 * blocking index derives from the newest event's ID.
 */
import { Buffer } from "node:buffer";
import { compileGoRegexp } from "../connect/index.ts";
import { eventListIndex, type UserEventView } from "../model/index.ts";

/** Serf event names Consul uses for user events. */
export const USER_EVENT_PREFIX = "consul:event:";
/** How many events an agent remembers (Consul's userEventBufferSize). */
export const EVENT_BUFFER_SIZE = 256;

const enc = new TextEncoder();
const dec = new TextDecoder();

/** The gossiped form: the event with its filters (Consul sends msgpack; ours is JSON). */
export function encodeUserEvent(e: UserEventView): Uint8Array {
  return enc.encode(JSON.stringify({ ...e, Payload: e.Payload === null ? null : Buffer.from(e.Payload).toString("base64") }));
}

/** Undefined for bytes that are not an event (dropped with a log line by the caller). */
export function decodeUserEvent(bytes: Uint8Array, ltime: number): UserEventView | undefined {
  try {
    const o = JSON.parse(dec.decode(bytes)) as Record<string, unknown>;
    if (typeof o.ID !== "string" || typeof o.Name !== "string") return undefined;
    const str = (v: unknown) => (typeof v === "string" ? v : "");
    return {
      ID: o.ID,
      Name: o.Name,
      Payload: typeof o.Payload === "string" ? new Uint8Array(Buffer.from(o.Payload, "base64")) : null,
      NodeFilter: str(o.NodeFilter),
      ServiceFilter: str(o.ServiceFilter),
      TagFilter: str(o.TagFilter),
      Version: typeof o.Version === "number" ? o.Version : 1,
      LTime: ltime,
    };
  } catch {
    return undefined;
  }
}

/** What filters are checked against: this agent's node name and its services with their tags. */
export interface LocalIdentity {
  readonly nodeName: string;
  services(): readonly { readonly service: string; readonly tags: readonly string[] }[];
}

/** Consul's shouldProcessUserEvent: every given filter must match (Go regular expressions, unanchored). */
export function eventMatches(e: UserEventView, local: LocalIdentity): boolean {
  try {
    if (e.NodeFilter && !compileGoRegexp(e.NodeFilter).test(local.nodeName)) return false;
    if (e.ServiceFilter) {
      const service = compileGoRegexp(e.ServiceFilter);
      const tag = e.TagFilter ? compileGoRegexp(e.TagFilter) : undefined;
      return local.services().some((s) => service.test(s.service) && (!tag || s.tags.some((t) => tag.test(t))));
    }
  } catch {
    return false; // an invalid expression matches nothing
  }
  return true;
}

/** The agent's last EVENT_BUFFER_SIZE accepted events, with change notification for blocking lists. */
export class EventBuffer {
  private readonly events: UserEventView[] = [];
  private readonly seen = new Set<string>();
  private readonly listeners = new Set<() => void>();

  /** Adds an event once (by ID); returns false for a repeat. */
  add(e: UserEventView): boolean {
    if (this.seen.has(e.ID)) return false;
    this.seen.add(e.ID);
    this.events.push(e);
    if (this.events.length > EVENT_BUFFER_SIZE) this.seen.delete(this.events.shift()!.ID);
    for (const fn of [...this.listeners]) fn();
    return true;
  }

  /** Events named `name` (all when empty), oldest first. */
  list(name: string): UserEventView[] {
    return this.events.filter((e) => !name || e.Name === name);
  }

  /** Calls `fn` after every added event until the returned function is called. */
  onAdd(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}

/** The agent's user events: firing on the LAN pool, and the events this agent accepted. */
export interface UserEvents {
  /** Gossips a new event to the datacenter; rejects with a message (e.g. over the size limit). */
  fire(e: { name: string; payload: Uint8Array | null; nodeFilter: string; serviceFilter: string; tagFilter: string }): Promise<UserEventView>;
  /** Events this agent accepted, oldest first, named `name` (all when ""), with the list's index. */
  list(name: string): { readonly events: readonly UserEventView[]; readonly index: bigint };
  /** Resolves "changed" at the next accepted event, "timeout" after `timeoutMs`, or when `signal` aborts. */
  waitForEvent(timeoutMs: number, signal: AbortSignal): Promise<"changed" | "timeout">;
}

/** User events over the LAN pool and this agent's event buffer. */
export function createEventsApi(o: {
  lan: { userEvent(name: string, payload: Uint8Array): void; subscribe(fn: (e: { type: string; name?: string; payload?: Uint8Array; ltime?: number }) => void): unknown };
  local: LocalIdentity;
  clock: { setTimer(ms: number, fn: () => void): () => void };
  newId: () => string;
  onBadEvent?: (name: string) => void;
}): UserEvents {
  const buffer = new EventBuffer();
  o.lan.subscribe((e) => {
    if (e.type !== "user" || !e.name?.startsWith(USER_EVENT_PREFIX) || !e.payload) return;
    const event = decodeUserEvent(e.payload, e.ltime ?? 0);
    if (!event) return o.onBadEvent?.(e.name);
    if (eventMatches(event, o.local)) buffer.add(event);
  });
  return {
    async fire(f) {
      const event: UserEventView = {
        ID: o.newId(), Name: f.name, Payload: f.payload, NodeFilter: f.nodeFilter, ServiceFilter: f.serviceFilter, TagFilter: f.tagFilter, Version: 1, LTime: 0,
      };
      try {
        o.lan.userEvent(USER_EVENT_PREFIX + f.name, encodeUserEvent(event));
      } catch (err) {
        throw new Error(`User event exceeds the size limit: ${(err as Error).message}`);
      }
      return event;
    },
    list(name) {
      const events = buffer.list(name);
      return { events, index: eventListIndex(events) };
    },
    waitForEvent(timeoutMs, signal) {
      return new Promise((resolve) => {
        let done = false;
        const finish = (outcome: "changed" | "timeout") => {
          if (done) return;
          done = true;
          cancelTimer();
          stopListening();
          signal.removeEventListener("abort", onAbort);
          resolve(outcome);
        };
        const onAbort = () => finish("timeout");
        const stopListening = buffer.onAdd(() => finish("changed"));
        const cancelTimer = o.clock.setTimer(timeoutMs, () => finish("timeout"));
        signal.addEventListener("abort", onAbort);
      });
    },
  };
}
