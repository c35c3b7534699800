/**
 * Serf's user-event bookkeeping (hashicorp/serf serf/serf.go handleUserEvent, delegate.go LocalState /
 * MergeRemoteState): the event Lamport clock, the events of the last `window` Lamport times (serf's
 * eventBuffer), the floor below which events are ignored (serf eventMinTime), and the push-pull state
 * part built from them (Serf assembles the whole state, serf_intents.ts the member part). Pure; Serf owns one
 * and delivers what it accepts.
 *
 * Why the push-pull part matters: a gossiped event is sent only retransmit-limit times, each time to a
 * random member, so in a small cluster it misses a member now and then even without any loss; serf
 * repairs that with the event buffer it pushes and pulls (a push-pull with a member that has the event
 * delivers it). Events are identified by their gossip key (origin node, Lamport time and name).
 */
import { SerfKind, decodeSerfMsg, type SerfMsg, type SerfPushPullState } from "./codec.ts";
import { Lamport } from "./lamport.ts";
import { tryDecode } from "./wire.ts";

/** What merging a peer's push-pull events gave: the events that were news here, oldest first. */
export interface MergedEvents {
  readonly news: readonly SerfMsg[];
  /** Events in the state that did not decode, were not user events, or were past the bound (EVENTS_PER_WINDOW_TIME): dropped. */
  readonly bad: number;
}

/**
 * How many events of the window are kept, and taken from one peer's push-pull, per Lamport time of the window
 * on average. serf keeps every event of a slot; a legitimate cluster has a handful per time, and the bound
 * stops a peer's push-pull with tens of thousands from holding this node (and, through its own push-pulls,
 * every peer) for minutes.
 */
export const EVENTS_PER_WINDOW_TIME = 4;

export class SerfEventLog {
  private readonly clock = new Lamport();
  /** key -> Lamport time and encoded serf message, for the events of the window (insertion order). */
  private readonly recent = new Map<string, { ltime: number; msg: Uint8Array }>();
  /** The floor the last pruning of `recent` used: pruning again is needed only once the floor rises. */
  private prunedBelow = 0;
  private minTime = 0;
  private joinsIgnoringOld = 0;

  /** `window`: Lamport times remembered (serf EventBuffer). */
  constructor(private readonly window: number) {}

  /** The event clock now (serf event_time). */
  get time(): number {
    return this.clock.time;
  }

  /** The Lamport time for a new local event (serf UserEvent). */
  stamp(): number {
    return this.clock.increment();
  }

  /**
   * serf handleUserEvent's checks: witnesses the time and records the event unless it is below the floor,
   * older than the window, or already seen. True when it is news (to deliver). `raw` is its encoded message.
   */
  accept(key: string, m: SerfMsg, raw: Uint8Array): boolean {
    this.clock.witness(m.ltime);
    if (m.ltime < this.minTime) return false;
    const floor = this.clock.time - this.window;
    if (m.ltime < floor || this.recent.has(key)) return false;
    this.recent.set(key, { ltime: m.ltime, msg: raw });
    if (floor > this.prunedBelow) {
      this.prunedBelow = floor;
      for (const [k, e] of this.recent) if (e.ltime < floor) this.recent.delete(k);
    }
    // Over the bound, the oldest-recorded events go first (Map keeps insertion order).
    const cap = this.window * EVENTS_PER_WINDOW_TIME;
    for (const k of this.recent.keys()) {
      if (this.recent.size <= cap) break;
      this.recent.delete(k);
    }
    return true;
  }

  /** See Serf.ignoreOldEvents (serf eventJoinIgnore). The returned function ends the join; calling it again does nothing. */
  ignoreOldEvents(): () => void {
    this.joinsIgnoringOld++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.joinsIgnoringOld--;
    };
  }

  /** serf LocalState's event part: our event clock and the events of the window, oldest first. */
  localState(): Pick<SerfPushPullState, "eventLTime" | "events"> {
    const floor = this.clock.time - this.window;
    const events = [...this.recent].filter(([, e]) => e.ltime >= floor)
      .sort(([ka, a], [kb, b]) => a.ltime - b.ltime || (ka < kb ? -1 : ka > kb ? 1 : 0))
      .map(([key, e]) => ({ key, msg: e.msg }));
    return { eventLTime: this.clock.time, events };
  }

  /**
   * serf MergeRemoteState's event part, for a decoded state: witnesses the peer's event clock (minus one:
   * nothing was sent at it yet), raises the floor to it when this is a join push-pull during a join that
   * ignores old events, then accepts each event.
   */
  merge(pp: Pick<SerfPushPullState, "eventLTime" | "events">, join: boolean): MergedEvents {
    if (pp.eventLTime > 0) this.clock.witness(pp.eventLTime - 1);
    if (join && this.joinsIgnoringOld > 0) this.minTime = Math.max(this.minTime, pp.eventLTime);
    const news: SerfMsg[] = [];
    let bad = 0;
    // At most the bound's worth of a peer's events are looked at (the newest: a state lists them oldest first).
    const cap = this.window * EVENTS_PER_WINDOW_TIME;
    const events = pp.events.length > cap ? pp.events.slice(pp.events.length - cap) : pp.events;
    bad += pp.events.length - events.length;
    for (const e of events) {
      const m = tryDecode(decodeSerfMsg, e.msg);
      if (m === undefined || m.kind !== SerfKind.Event) bad++;
      else if (this.accept(e.key, m, e.msg)) news.push(m);
    }
    return { news, bad };
  }
}
