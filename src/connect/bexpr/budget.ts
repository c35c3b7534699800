/**
 * Work accounting for filter evaluation. Cost is counted in work units, not time, so that evaluation
 * slices, yields and budget failures are deterministic (the same filter over the same items always yields
 * at the same items and fails at the same point) and need no clock.
 *
 * One unit is one elementary step, weighted so that each costs about the same time: taking the next item
 * (1), a selector step (a field or map-key lookup) on one value (2), one character of a `matches` input (1)
 * plus each NFA state it touches (1 each), 64 characters scanned by a substring test (1). Measured on this
 * project's 2-core machines (Bun 1.4, warm JIT): ~9-10 ns per unit for each kind, up to ~25 ns under load
 * (test/bench/filter.ts prints the rate). So the defaults below are about: a slice 1 ms, one item 20 ms,
 * a whole evaluation 5 s (two to three times that on a busy machine).
 */
import { FilterTooExpensiveError } from "./errors.ts";

/** Receives the cost of evaluation as it happens; `charge` may throw to stop the evaluation. */
export interface WorkSink {
  charge(units: number): void;
}

/** A sink that counts nothing: plain `Filter.matches`. */
export const UNMETERED: WorkSink = { charge() {} };

/** Work between two yields of filterListAsync when the caller does not say: 100,000 units (~1 ms). */
export const DEFAULT_SLICE_UNITS = 100_000;

/**
 * Most work one item may cost: 2,000,000 units. One item is evaluated without yielding, so this bounds the
 * longest stall a filter can cause (with the 100 ms the hardening issue allows a concurrent write to wait).
 * A realistic filter costs tens to a few thousand units per item (1,000 `Meta.k == v` clauses cost 4,000);
 * reaching this takes e.g. thousands of live NFA states over hundreds of characters.
 */
export const DEFAULT_MAX_ITEM_UNITS = 2_000_000;

/**
 * Most work a whole evaluation may cost: 500,000,000 units. It protects CPU rather than latency (the
 * evaluation yields): a 20-clause filter with a few small regexps over 50,000 catalog rows costs well under
 * 100,000,000; the benchmark's 1,001-clause filter over 50,000 nodes with 200-character names, 430,000,000.
 */
export const DEFAULT_MAX_FILTER_UNITS = 500_000_000;

/** Limits for one evaluation; Infinity switches a limit off. */
export interface FilterBudget {
  /** Most units over all items (default DEFAULT_MAX_FILTER_UNITS). */
  readonly maxUnits?: number;
  /** Most units for any one item (default DEFAULT_MAX_ITEM_UNITS). */
  readonly maxItemUnits?: number;
}

/**
 * Counts the work of one evaluation (one list) against a FilterBudget. Call `startItem` before each item;
 * `charge` throws FilterTooExpensiveError as soon as either limit is passed, even in the middle of an item
 * (for instance part-way through a regexp run).
 */
export class WorkMeter implements WorkSink {
  /** Units charged so far. */
  used = 0;
  private readonly maxUnits: number;
  private readonly maxItemUnits: number;
  private limit: number;

  constructor(budget: FilterBudget = {}) {
    this.maxUnits = budget.maxUnits ?? DEFAULT_MAX_FILTER_UNITS;
    this.maxItemUnits = budget.maxItemUnits ?? DEFAULT_MAX_ITEM_UNITS;
    this.limit = Math.min(this.maxUnits, this.maxItemUnits);
  }

  /** Marks the start of the next item (its own limit counts from here) and charges one unit for it. */
  startItem(): void {
    this.limit = Math.min(this.maxUnits, this.used + this.maxItemUnits);
    this.charge(1);
  }

  charge(units: number): void {
    this.used += units;
    if (this.used > this.limit) this.exceeded();
  }

  private exceeded(): never {
    if (this.used > this.maxUnits) {
      throw new FilterTooExpensiveError(`filter too expensive: evaluating it needs more than ${this.maxUnits} work units; simplify the expression or narrow the query`);
    }
    throw new FilterTooExpensiveError(`filter too expensive: one item needs more than ${this.maxItemUnits} work units; simplify the expression (its regular expressions especially)`);
  }
}
