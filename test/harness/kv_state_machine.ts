/**
 * The replicated KV map the simulation drives: put and compare-and-set commands, gets served locally
 * after a linearizable read point. Also records the applied sequence for the "same sequence" checker.
 */
import type { StateMachine } from "../../src/consensus/index.ts";

export type KvCommand =
  | { readonly op: "put"; readonly key: string; readonly value: string }
  | { readonly op: "cas"; readonly key: string; readonly expected: string | undefined; readonly value: string };

export interface KvResult {
  readonly ok: boolean;
}

export interface KvStateMachine extends StateMachine<KvResult> {
  get(key: string): string | undefined;
  /** (index, command text) of every command applied since creation or the last restore. */
  readonly appliedLog: { index: number; command: string }[];
  /** Index of the last applied command or restored snapshot. */
  lastIndex(): number;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

export function encodeKvCommand(c: KvCommand): Uint8Array {
  return enc.encode(JSON.stringify(c));
}

export function kvStateMachine(onApply?: (index: number, command: string) => void): KvStateMachine {
  let map = new Map<string, string>();
  let last = 0;
  const sm: KvStateMachine = {
    appliedLog: [],
    apply(index, command) {
      const text = dec.decode(command);
      const c = JSON.parse(text) as KvCommand;
      last = index;
      sm.appliedLog.push({ index, command: text });
      onApply?.(index, text);
      if (c.op === "put") {
        map.set(c.key, c.value);
        return { ok: true };
      }
      const cur = map.get(c.key);
      if (cur !== (c.expected ?? undefined)) return { ok: false };
      map.set(c.key, c.value);
      return { ok: true };
    },
    snapshot: () => enc.encode(JSON.stringify({ last, entries: [...map.entries()].sort() })),
    restore(data) {
      const s = JSON.parse(dec.decode(data)) as { last: number; entries: [string, string][] };
      map = new Map(s.entries);
      last = s.last;
    },
    get: (key) => map.get(key),
    lastIndex: () => last,
  };
  return sm;
}
