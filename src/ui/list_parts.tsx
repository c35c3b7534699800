/** @jsxImportSource hono/jsx */
/** Pieces every list page shares: health in words with a symbol (never colour alone), the health filter, and the pager. */

export type Health = "passing" | "warning" | "critical";

const SYMBOL: Record<Health, string> = { passing: "✓", warning: "!", critical: "✕" };

/** A table cell with the health as a symbol (hidden from screen readers) and the word; `detail` follows in brackets. */
export function HealthCell(props: { readonly health: Health; readonly detail?: string }) {
  const { health, detail } = props;
  return <td class={`health-${health}`}><span aria-hidden="true">{SYMBOL[health]} </span>{health}{detail ? ` (${detail})` : ""}</td>;
}

export function HealthSelect(props: { readonly value: "" | Health }) {
  return (
    <label>Health
      <select name="status">
        {(["", "passing", "warning", "critical"] as const).map((v) => <option value={v} selected={v === props.value}>{v === "" ? "Any health" : v}</option>)}
      </select>
    </label>
  );
}

export function Pager(props: { readonly page: number; readonly pages: number; readonly link: (page: number) => string }) {
  const { page, pages, link } = props;
  if (pages <= 1) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {page > 1 ? <a href={link(page - 1)} rel="prev">Previous page</a> : null}
      {page < pages ? <a href={link(page + 1)} rel="next">Next page</a> : null}
    </nav>
  );
}

/** The status filter's value from a query parameter: a health, or "" for any. */
export function healthParam(v: string | undefined): "" | Health {
  return v === "passing" || v === "warning" || v === "critical" ? v : "";
}

/** A 1-based page number from a query parameter; 1 for anything else. */
export function pageParam(v: string | undefined): number {
  const page = Number(v ?? "1");
  return Number.isInteger(page) && page > 0 ? page : 1;
}

/** "1 instance", "3 instances". */
export function counted(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
