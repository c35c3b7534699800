/**
 * A port of hashicorp/hcl v1.0.0's printer (`hcl/printer`, the `hclprinter.Fprint` Consul 1.8 prints
 * translated rules with): two-space indentation, `=` aligned across adjacent one-line items, blank lines
 * between top-level items, single-line lists, comments kept where hcl v1's parser attached them.
 * Output is byte-for-byte what Fprint writes (no trailing newline), including its quirks: layout
 * decisions read the source line numbers, and printing one item may move the "previous item" marker
 * that places standalone comments (the port keeps that state as Go's printer does).
 */
import { nodePos, type V1CommentGroup, type V1File, type V1Item, type V1List, type V1Node, type V1Object, type V1Pos } from "./hcl_v1_ast.ts";

/** Marks the start of lines that must not be indented (second and later lines of a block comment). */
const UNINDENT = "\uE123";
const INFINITY = 1 << 30;
const NO_POS: V1Pos = { offset: 0, line: 0, column: 0 };
const encoder = new TextEncoder();
/** Go's len() of a string: UTF-8 bytes. */
const byteLen = (s: string) => encoder.encode(s).length;

const before = (p: V1Pos, u: V1Pos) => u.offset > p.offset || u.line > p.line;
const after = (p: V1Pos, u: V1Pos) => u.offset < p.offset || u.line < p.line;
const samePos = (a: V1Pos, b: V1Pos) => a.offset === b.offset && a.line === b.line && a.column === b.column;
const itemPos = (i: V1Item) => i.keys[0]!.pos;

/** Prints `file` as hclprinter.Fprint does. */
export function printHclV1(file: V1File): string {
  return new Printer(file).print();
}

class Printer {
  private prev: V1Pos = NO_POS;
  private readonly standalone: V1CommentGroup[];

  constructor(private readonly file: V1File) {
    // Standalone comments: those attached to no item or list element as lead or line comment.
    const attached = new Set<number>();
    const mark = (g: V1CommentGroup | undefined) => g?.list.forEach((c) => attached.add(c.pos.offset));
    const walk = (n: V1Node | V1Item) => {
      if ("keys" in n) {
        mark(n.leadComment);
        mark(n.lineComment);
        walk(n.val);
      } else if (n.kind === "literal") {
        mark(n.leadComment);
        mark(n.lineComment);
      } else if (n.kind === "object") n.items.forEach(walk);
      else n.list.forEach(walk);
    };
    file.items.forEach(walk);
    // Go keys the groups by their first comment's position, then drops the attached ones.
    this.standalone = file.comments.filter((g) => g.list.length > 0 && !attached.has(g.list[0]!.pos.offset)).sort((a, b) => a.list[0]!.pos.offset - b.list[0]!.pos.offset);
  }

  print(): string {
    return unindent(this.objectList(this.file.items));
  }

  private objectList(items: readonly V1Item[]): string {
    let buf = "";
    for (let index = 0; ; index++) {
      const nextItem: V1Pos = index !== items.length ? itemPos(items[index]!) : { offset: INFINITY, line: INFINITY, column: 0 };
      for (const c of this.standalone) {
        let printed = false;
        let newlinePrinted = false;
        for (const comment of c.list) {
          if (after(comment.pos, this.prev) && before(comment.pos, nextItem)) {
            if (!newlinePrinted && this.prev.line > 0 && index === items.length) {
              buf += "\n\n";
              newlinePrinted = true;
            }
            buf += `${comment.text}\n`;
            printed = true;
          }
        }
        if (printed && index !== items.length) buf += "\n";
      }
      if (index === items.length) break;
      buf += this.outputItem(items[index]!);
      if (index !== items.length - 1) {
        buf += "\n";
        const current = items[index]!;
        const next = items[index + 1]!;
        if (itemPos(next).line !== itemPos(current).line + 1 || !isSingleLineObject(next) || !isSingleLineObject(current)) buf += "\n";
      }
    }
    return buf;
  }

  private outputItem(item: V1Item): string {
    this.prev = itemPos(item);
    return this.objectItem(item);
  }

  private output(n: V1Node): string {
    switch (n.kind) {
      case "literal":
        // A string spanning lines keeps lines 2+ unindented (none reach here: strings end on their line).
        return n.token.text.includes("\n") && n.token.type === "STRING" ? heredocIndent(n.token.text) : n.token.text;
      case "list":
        return this.list(n);
      case "object":
        return this.objectType(n);
    }
  }

  private objectItem(o: V1Item): string {
    let buf = "";
    for (const c of o.leadComment?.list ?? []) buf += `${c.text}\n`;
    const keyLine = itemPos(o).line;
    if (o.lineComment && nodePos(o.val).line !== keyLine) for (const c of o.lineComment.list) buf += `${c.text}\n`;
    o.keys.forEach((k, i) => {
      buf += `${k.text} `;
      if (o.assign && i === o.keys.length - 1 && o.keys.length === 1) buf += "= ";
    });
    buf += this.output(o.val);
    if (o.lineComment && nodePos(o.val).line === keyLine) {
      buf += " ";
      for (const c of o.lineComment.list) buf += c.text;
    }
    return buf;
  }

  private objectType(o: V1Object): string {
    let buf = "{";
    const items = o.items;
    let index = 0;
    let commented = false;
    let newlinePrinted = false;
    for (;;) {
      const nextItem = index !== items.length ? itemPos(items[index]!) : o.rbrace;
      for (const c of this.standalone) {
        let printed = false;
        let lastCommentPos = NO_POS;
        for (const comment of c.list) {
          if (after(comment.pos, this.prev) && before(comment.pos, nextItem)) {
            if (!newlinePrinted) {
              newlinePrinted = true;
              buf += "\n";
            }
            if (index > 0) {
              commented = true;
              buf += "\n";
            }
            lastCommentPos = comment.pos;
            buf += indent(heredocIndent(comment.text));
            printed = true;
          }
        }
        if (printed) {
          buf += "\n";
          if (!samePos(nextItem, o.rbrace) && nextItem.line !== lastCommentPos.line + 1) buf += "\n";
        }
      }
      if (index === items.length) {
        this.prev = o.rbrace;
        break;
      }
      if (!newlinePrinted) {
        buf += "\n";
        newlinePrinted = true;
      }
      // Adjacent one-line items are printed as one aligned group.
      const aligned: V1Item[] = [];
      for (const item of items.slice(index)) {
        if (items.length === 1) break;
        if (lines(this.objectItem(item)) > 2) break;
        const curPos = itemPos(item);
        const nextPos = index !== items.length - 1 ? itemPos(items[index + 1]!) : NO_POS;
        const prevPos = index !== 0 ? itemPos(items[index - 1]!) : NO_POS;
        if (curPos.line + 1 === nextPos.line) {
          aligned.push(item);
          index++;
          continue;
        }
        if (curPos.line - 1 === prevPos.line) {
          aligned.push(item);
          index++;
          if (curPos.line + 1 !== nextPos.line) break;
          continue;
        }
        break;
      }
      if (!commented && index !== aligned.length) buf += "\n";
      if (aligned.length >= 1) {
        this.prev = itemPos(aligned[aligned.length - 1]!);
        buf += indent(this.alignedItems(aligned));
      } else {
        this.prev = itemPos(items[index]!);
        buf += indent(this.objectItem(items[index]!));
        index++;
      }
      buf += "\n";
    }
    return `${buf}}`;
  }

  private alignedItems(items: readonly V1Item[]): string {
    let longestKey = 0;
    let longestVal = 0;
    for (const item of items) {
      longestKey = Math.max(longestKey, byteLen(item.keys[0]!.text));
      longestVal = Math.max(longestVal, byteLen(this.output(item.val)));
    }
    let buf = "";
    items.forEach((item, i) => {
      for (const c of item.leadComment?.list ?? []) buf += `${c.text}\n`;
      item.keys.forEach((k, j) => {
        buf += k.text + " ".repeat(Math.max(0, longestKey - byteLen(k.text) + 1));
        if (j === item.keys.length - 1 && item.keys.length === 1) buf += "= ";
      });
      const val = this.output(item.val);
      buf += val;
      if (nodePos(item.val).line === itemPos(item).line && item.lineComment) {
        buf += " ".repeat(Math.max(0, longestVal - byteLen(val) + 1));
        for (const c of item.lineComment.list) buf += c.text;
      }
      if (i !== items.length - 1) buf += "\n";
    });
    return buf;
  }

  private list(l: V1List): string {
    if (isSingleLineList(l)) return `[${l.list.map((x) => this.output(x)).join(", ")}]`;
    let buf = "[\n";
    let longestLine = 0;
    for (const item of l.list) if (item.kind === "literal") longestLine = Math.max(longestLine, byteLen(item.token.text));
    let haveEmptyLine = false;
    l.list.forEach((item, i) => {
      let leadComment = false;
      if (item.kind === "literal" && item.leadComment) {
        leadComment = true;
        if (!haveEmptyLine && i !== 0) buf += "\n";
        for (const c of item.leadComment.list) buf += `${indent(c.text)}\n`;
      }
      const val = this.output(item);
      buf += `${indent(val)},`;
      if (item.kind === "literal" && item.lineComment) {
        buf += " ".repeat(1 + Math.max(0, longestLine - byteLen(val)));
        for (const c of item.lineComment.list) buf += c.text;
      }
      buf += "\n";
      haveEmptyLine = leadComment && i !== l.list.length - 1;
      if (haveEmptyLine) buf += "\n";
    });
    return `${buf}]`;
  }
}

/** "obj {}": no lead comment, no `=`, an empty object. */
function isSingleLineObject(item: V1Item): boolean {
  return !item.leadComment && !item.assign && item.val.kind === "object" && item.val.items.length === 0;
}

/** Written on one line, literals only, no line comments. */
function isSingleLineList(l: V1List): boolean {
  return l.list.every((item) => nodePos(item).line === l.lbrack.line && item.kind === "literal" && !item.lineComment);
}

function lines(text: string): number {
  return text.split("\n").length;
}

/** Two spaces before every non-empty line. */
function indent(text: string): string {
  let out = "";
  let bol = true;
  for (const c of text) {
    if (bol && c !== "\n") out += "  ";
    out += c;
    bol = c === "\n";
  }
  return out;
}

/** Marks lines 2+ so that the final pass strips their indentation. */
function heredocIndent(text: string): string {
  let out = "";
  let bol = false;
  for (const c of text) {
    if (bol && c !== "\n") out += UNINDENT;
    out += c;
    bol = c === "\n";
  }
  return out;
}

/** Removes each marker with the whitespace before it on its line. */
function unindent(text: string): string {
  let out = "";
  for (const c of text) {
    if (c !== UNINDENT) {
      out += c;
      continue;
    }
    const nl = out.lastIndexOf("\n");
    out = out.slice(0, nl + 1);
  }
  return out;
}
