/** Where in the expression a syntax error was found: offset in UTF-16 units, line and column 1-based. */
export interface FilterPosition {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

/**
 * The one error compileFilter throws: a syntax error (with `position`), an unknown selector, an operator the
 * selected field does not support, a value that does not coerce to the field's type, or a bad regular
 * expression. The message is fit for an HTTP 400 body. Consul itself wraps the same text as
 * `Failed to create boolean expression evaluator: <message>` (go-bexpr filter.go, CreateFilter); the HTTP
 * layer may add that prefix to match Consul byte for byte.
 */
export class FilterError extends Error {
  override readonly name: string = "FilterError";
  constructor(message: string, readonly position?: FilterPosition) {
    super(message);
  }
}

/** Line and column (1-based, columns in code points) of `offset` in `src`. */
export function positionOf(src: string, offset: number): FilterPosition {
  let line = 1, lineStart = 0;
  for (let i = 0; i < offset && i < src.length; i++) {
    if (src.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  const column = [...src.slice(lineStart, offset)].length + 1;
  return { offset, line, column };
}

/** A FilterError for a syntax error at `offset`, its message prefixed with the line and column. */
export function syntaxError(src: string, offset: number, detail: string): FilterError {
  const pos = positionOf(src, offset);
  return new FilterError(`Syntax error at line ${pos.line}, column ${pos.column}: ${detail}`, pos);
}

/**
 * Evaluation stopped because the filter cost more work than its budget allows (budget.ts): in total over
 * the items, or on one item. A FilterError, so a handler that answers 400 for bad filters also covers it;
 * the message starts with "filter too expensive".
 */
export class FilterTooExpensiveError extends FilterError {
  override readonly name: string = "FilterTooExpensiveError";
}
