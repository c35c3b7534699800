/**
 * Shape checks for the `coordinate-batch` command and the snapshot's coordinate rows: Node and Segment
 * strings, and a Coord of COORDINATE_DIMENSIONALITY finite Vec components and finite Error, Adjustment and
 * Height (serf's IsValid plus the dimensionality every server uses). Throws StateCommandError naming the path.
 */
import { COORDINATE_DIMENSIONALITY, type CoordinateEntry } from "../model/index.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";
import { checkRequired, isObj, objArray, type Obj } from "./codec_shapes.ts";

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

/**
 * A float64 component as the log hands it back: the log's exact-number reader turns an integral literal
 * past 2^53 into a bigint (it cannot tell a float from an integer), which is the same float here.
 */
const asFloat = (x: unknown): unknown => (typeof x === "bigint" ? Number(x) : x);
const isFinite64 = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/** A coordinate entry as a command (or a snapshot row) carries it; returns exactly its fields. */
export function coordinateEntryShape(v: unknown, path: string): CoordinateEntry {
  if (!isObj(v)) bad(path, "must be an object");
  checkRequired(v, path, { Node: "str", Segment: "str", Coord: "obj" });
  const c = v.Coord as Obj;
  const where = `${path}.Coord`;
  const [error, adjustment, height] = [asFloat(c.Error), asFloat(c.Adjustment), asFloat(c.Height)];
  for (const [name, x] of [["Error", error], ["Adjustment", adjustment], ["Height", height]] as const) {
    if (!isFinite64(x)) bad(`${where}.${name}`, "must be a finite number");
  }
  const vec = Array.isArray(c.Vec) ? c.Vec.map(asFloat) : undefined;
  if (!vec || vec.length !== COORDINATE_DIMENSIONALITY || !vec.every(isFinite64)) {
    bad(`${where}.Vec`, `must be an array of ${COORDINATE_DIMENSIONALITY} finite numbers`);
  }
  return {
    Node: v.Node as string,
    Segment: v.Segment as string,
    Coord: { Vec: vec as number[], Error: error as number, Adjustment: adjustment as number, Height: height as number },
  };
}

/** A `coordinate-batch` command. */
export function decodeCoordinateBatchCommand(raw: Obj): StateCommand {
  const updates = objArray(raw, "updates", "coordinate-batch").map((u, i) => coordinateEntryShape(u, `coordinate-batch.updates[${i}]`));
  return { type: "coordinate-batch", updates };
}
