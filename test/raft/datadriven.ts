/**
 * Minimal datadriven (transcript) file support, modelled on cockroachdb/datadriven as used by etcd raft:
 *
 *   # comment
 *   directive arg key=value key=(a,b)
 *   ----
 *   expected output (no blank lines)
 *   <blank line>
 */

export interface TestCase {
  readonly line: number;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly kv: ReadonlyMap<string, string>;
  readonly input: string;
  readonly expected: string;
}

export interface Chunk {
  readonly kind: "text" | "case";
  readonly text: string;
  readonly testCase?: TestCase;
}

export function parseTranscript(src: string): Chunk[] {
  const lines = src.split("\n");
  const chunks: Chunk[] = [];
  let i = 0;
  while (i < lines.length) {
    const l = lines[i]!;
    if (l.trim() === "" || l.startsWith("#")) {
      chunks.push({ kind: "text", text: l });
      i++;
      continue;
    }
    const start = i + 1;
    const input = l;
    i++;
    if (lines[i] !== "----") throw new Error(`line ${start}: expected ---- after directive`);
    i++;
    const out: string[] = [];
    while (i < lines.length && lines[i]!.trim() !== "") out.push(lines[i++]!);
    const toks = input.trim().split(/\s+/);
    const args: string[] = [];
    const kv = new Map<string, string>();
    for (const t of toks.slice(1)) {
      const eq = t.indexOf("=");
      if (eq > 0) kv.set(t.slice(0, eq), t.slice(eq + 1));
      else args.push(t);
    }
    chunks.push({ kind: "case", text: input, testCase: { line: start, cmd: toks[0]!, args, kv, input, expected: out.join("\n") } });
  }
  // Drop the trailing empty chunk produced by the final newline.
  while (chunks.length > 0 && chunks[chunks.length - 1]!.kind === "text" && chunks[chunks.length - 1]!.text === "") chunks.pop();
  return chunks;
}

export function renderTranscript(chunks: readonly Chunk[], outputs: ReadonlyMap<number, string>): string {
  const parts: string[] = [];
  for (const c of chunks) {
    if (c.kind === "text") {
      parts.push(c.text);
      continue;
    }
    const tc = c.testCase!;
    parts.push(tc.input, "----", outputs.get(tc.line) ?? tc.expected);
    parts.push("");
  }
  return parts.join("\n").replace(/\n\n\n+/g, "\n\n").trimEnd() + "\n";
}

/** Parses "(1,2,3)" or "1" into a list. */
export function parseList(v: string | undefined): string[] {
  if (v === undefined || v === "" || v === "()") return [];
  return v.replace(/^\(/, "").replace(/\)$/, "").split(",").filter((s) => s !== "");
}
