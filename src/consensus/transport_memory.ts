/**
 * An in-process {@link Transport}: several nodes in one process, no sockets, no faults.
 *
 * Every delivery happens in a later microtask (`queueMicrotask`), never inside `send`, so a handler
 * that sends in turn cannot recurse into another node's handler. Messages are passed by reference
 * (they are readonly values); snapshot bytes are copied, so the receiver owns its buffer. Messages to
 * an unknown, closed or handler-less node are silently lost. For faults (loss, delay, partitions) use
 * the simulated network of test/harness instead. A handler that throws is a bug: the error is not
 * caught and surfaces as an uncaught exception of that microtask.
 */
import type { Message } from "../raft/index.ts";
import type { Transport } from "./ports.ts";

type SnapHandler = (msg: Message & { type: "MsgSnap" }, data: Uint8Array) => void;

interface Endpoint {
  onMessage: ((msg: Message) => void) | undefined;
  onSnapshot: SnapHandler | undefined;
  closed: boolean;
}

/** A set of in-process transports that reach each other by node id. */
export interface MemoryNetwork {
  /**
   * The transport of node `id`. Throws if `id` already has an open transport; after `close()` the id
   * may join again (a restarted node).
   */
  join(id: string): Transport;
  /** Ids with an open transport, sorted. */
  members(): string[];
}

/** Creates an empty network. */
export function createMemoryNetwork(): MemoryNetwork {
  const endpoints = new Map<string, Endpoint>();
  const open = (id: string): Endpoint | undefined => {
    const e = endpoints.get(id);
    return e && !e.closed ? e : undefined;
  };

  return {
    join(id) {
      if (open(id)) throw new Error(`memory network: node ${id} already joined`);
      const self: Endpoint = { onMessage: undefined, onSnapshot: undefined, closed: false };
      endpoints.set(id, self);
      const pending = new Set<(ok: boolean) => void>();
      return {
        send(msg) {
          if (self.closed) return;
          queueMicrotask(() => {
            const target = open(msg.to);
            if (self.closed || !target?.onMessage || msg.type === "MsgSnap") return;
            target.onMessage(msg);
          });
        },
        sendSnapshot(to, msg, data) {
          if (self.closed) return Promise.resolve(false);
          const copy = data.slice();
          return new Promise<boolean>((resolve) => {
            const finish = (ok: boolean) => {
              if (pending.delete(finish)) resolve(ok);
            };
            pending.add(finish);
            queueMicrotask(() => {
              const target = open(to);
              if (self.closed || !target?.onSnapshot) return finish(false);
              try {
                target.onSnapshot(msg, copy);
              } catch {
                return finish(false);
              }
              finish(true);
            });
          });
        },
        onMessage(handler) { self.onMessage = handler; },
        onSnapshot(handler) { self.onSnapshot = handler; },
        close() {
          self.closed = true;
          for (const finish of [...pending]) finish(false);
          if (endpoints.get(id) === self) endpoints.delete(id);
          return Promise.resolve();
        },
      };
    },
    members() {
      return [...endpoints.keys()].filter((id) => open(id)).sort();
    },
  };
}
