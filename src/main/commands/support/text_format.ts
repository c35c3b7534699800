/**
 * Text layouts Consul's commands print with Go libraries, reproduced byte for byte: ryanuber/columnize
 * (tables), text/tabwriter (key/value blocks), encoding/json's MarshalIndent and strconv.Quote.
 */
import { bigintReplacer } from "../../../lib/index.ts";

/** Width of a cell as Go counts it (runes, not UTF-16 units). */
function runeLength(s: string): number {
  return [...s].length;
}

/**
 * ryanuber/columnize `Format` with the default config over rows already split into cells (so a `|` inside
 * a node name cannot split a cell, as Consul's `\x1f` delimiter ensures): each cell trimmed, every cell but
 * a row's last padded to the widest cell of its column, cells joined by two spaces, rows by "\n", no
 * trailing newline.
 */
export function columnizeRows(rows: readonly (readonly string[])[]): string {
  const cells = rows.map((row) => row.map((cell) => cell.trim()));
  const widths: number[] = [];
  for (const row of cells) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, runeLength(cell))));
  return cells
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell + " ".repeat(widths[i]! - runeLength(cell)) + "  ")).join(""))
    .join("\n");
}

/**
 * Go's `text/tabwriter` as Consul's commands configure it (`NewWriter(w, 0, 2, padding, ' ', 0)`):
 * tab-terminated cells form columns over runs of consecutive lines that have them; each column is as
 * wide as its widest cell plus `padding` spaces; a line's last cell (not tab-terminated) is not padded.
 * Returns `text` laid out; newlines are kept where they were.
 */
export function tabwrite(text: string, padding = 6): string {
  const lines = text.split("\n").map((line) => line.split("\t"));
  const out: string[] = [];
  const widths: number[] = [];
  const writeLines = (from: number, to: number) => {
    for (let i = from; i < to; i++) {
      out.push(lines[i]!.map((cell, j) => (j < widths.length && j < lines[i]!.length - 1 ? cell + " ".repeat(Math.max(0, widths[j]! - runeLength(cell))) : cell)).join(""));
    }
  };
  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    for (let row = line0; row < line1; row++) {
      if (column >= lines[row]!.length - 1) continue;
      writeLines(line0, row);
      line0 = row;
      let width = 0;
      for (; row < line1 && column < lines[row]!.length - 1; row++) width = Math.max(width, runeLength(lines[row]![column]!) + padding);
      widths.push(width);
      format(line0, row);
      widths.pop();
      line0 = row;
      row--;
    }
    writeLines(line0, line1);
  };
  format(0, lines.length);
  return out.join("\n");
}

/**
 * Go's `json.MarshalIndent(v, "", "\t")` for plain data: JSON.stringify with tabs, plus Go's HTML-safe
 * escapes of `<`, `>`, `&` and U+2028/U+2029 (which only occur inside strings).
 */
export function goJsonIndent(value: unknown): string {
  return JSON.stringify(value, bigintReplacer, "\t").replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Go's `%q` for the printable strings seen in messages (quotes and backslashes escaped). */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}
