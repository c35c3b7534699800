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

/** A coordinate entry as a command (or a snapshot row) carries it; returns exactly its fields. */
export function coordinateEntryShape(v: unknown, path: string): CoordinateEntry {
  if (!isObj(v)) bad(path, "must be an object");
  checkRequired(v, path, { Node: "str", Segment: "str", Coord: "obj" });
  const c = v.Coord as Obj;
  const where = `${path}.Coord`;
  checkRequired(c, where, { Error: "num", Adjustment: "num", Height: "num" });
  const vec = c.Vec;
  if (!Array.isArray(vec) || vec.length !== COORDINATE_DIMENSIONALITY || !vec.every((x) => typeof x === "number" && Number.isFinite(x))) {
    bad(`${where}.Vec`, `must be an array of ${COORDINATE_DIMENSIONALITY} finite numbers`);
  }
  return {
    Node: v.Node as string,
    Segment: v.Segment as string,
    Coord: { Vec: vec as number[], Error: c.Error as number, Adjustment: c.Adjustment as number, Height: c.Height as number },
  };
}

/** A `coordinate-batch` command. */
export function decodeCoordinateBatchCommand(raw: Obj): StateCommand {
  const updates = objArray(raw, "updates", "coordinate-batch").map((u, i) => coordinateEntryShape(u, `coordinate-batch.updates[${i}]`));
  return { type: "coordinate-batch", updates };
}
