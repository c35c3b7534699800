/**
 * The log encoding of the restore commands: `restore` and the `restore-stage` chunks carry their bytes
 * as base64 strings inside the command's JSON (codec.ts).
 */
import { toBase64 } from "./bytes.ts";
import { StateCommandError, type StateCommand } from "./commands.ts";
import { bytesField, reqIndex, reqStr, type Obj } from "./codec_shapes.ts";

type RestoreCommand = Extract<StateCommand, { type: "restore" | "restore-stage" }>;

function bad(path: string, what: string): never {
  throw new StateCommandError(`invalid state command: ${path} ${what}`);
}

/** The JSON value of a restore command (bytes as base64). */
export function restoreWire(cmd: RestoreCommand): unknown {
  if (cmd.type === "restore") return { type: "restore", data: toBase64(cmd.data) };
  if (cmd.op === "chunk") return { ...cmd, data: toBase64(cmd.data) };
  return cmd;
}

/** Decodes a parsed `restore` command. */
export function decodeRestore(raw: Obj): StateCommand {
  return { type: "restore", data: bytesField(raw, "data", "restore", true) };
}

/** Decodes a parsed `restore-stage` command, checking the type of every field. */
export function decodeRestoreStage(raw: Obj): StateCommand {
  const path = "restore-stage";
  reqStr(raw, "id", path);
  const id = raw.id as string;
  switch (raw.op) {
    case "begin": {
      const chunks = reqIndex(raw, "chunks", path);
      const size = reqIndex(raw, "size", path);
      if (typeof raw.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(raw.sha256)) bad(`${path}.sha256`, "must be 64 lowercase hex digits");
      return { type: "restore-stage", op: "begin", id, chunks, size, sha256: raw.sha256 };
    }
    case "chunk":
      return { type: "restore-stage", op: "chunk", id, seq: reqIndex(raw, "seq", path), data: bytesField(raw, "data", path, true) };
    case "commit":
    case "abort":
      return { type: "restore-stage", op: raw.op, id };
    default:
      return bad(`${path}.op`, "must be begin, chunk, commit or abort");
  }
}
