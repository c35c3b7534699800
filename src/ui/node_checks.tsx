/** @jsxImportSource hono/jsx */
/**
 * A table of health checks (the node page's and the instance page's health-checks tabs): name, status
 * in words with a symbol, what it checks (the node or a service), output and notes. An output longer
 * than 4 KB shows its first 4 KB and a "Show all" link (`?full=<CheckID>`, a plain link: works without
 * JavaScript) that renders that one check's output in full. Pure: checks in, JSX out.
 */
import type { HealthCheck } from "../model/index.ts";
import { counted, HealthCell, type Health } from "./list_parts.tsx";

/** Outputs above this many UTF-8 bytes are truncated unless asked for in full (#8611). */
export const OUTPUT_LIMIT_BYTES = 4096;

export interface ShownOutput {
  readonly text: string;
  readonly truncated: boolean;
  /** The whole output's size in UTF-8 bytes. */
  readonly bytes: number;
}

/** The first `limit` UTF-8 bytes of `output` (never half a character), and whether anything was cut. */
export function truncateOutput(output: string, limit = OUTPUT_LIMIT_BYTES): ShownOutput {
  const encoded = new TextEncoder().encode(output);
  if (encoded.length <= limit) return { text: output, truncated: false, bytes: encoded.length };
  let end = limit;
  // Back up to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
  while (end > 0 && (encoded[end]! & 0xc0) === 0x80) end--;
  return { text: new TextDecoder().decode(encoded.subarray(0, end)), truncated: true, bytes: encoded.length };
}

/** "812 bytes", "4.0 KB", "1.5 MB". */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** How many checks are passing, warning and critical, in words ("3 checks: 2 passing, 0 warning, 1 critical"). */
export function checkCounts(checks: readonly HealthCheck[]): string {
  const counts: Record<Health, number> = { passing: 0, warning: 0, critical: 0 };
  for (const c of checks) counts[c.Status] = (counts[c.Status] ?? 0) + 1;
  return `${counted(checks.length, "check")}: ${counts.passing} passing, ${counts.warning} warning, ${counts.critical} critical`;
}

/** The element id of a check's row (the "Show all" link's fragment). */
export function checkRowId(checkId: string): string {
  return `check-${checkId.replace(/\s/g, "_")}`;
}

export interface ChecksTableProps {
  readonly caption: string;
  readonly checks: readonly HealthCheck[];
  /** The page's URL with `?full=<id>` (the "Show all" link) for a check id; undefined for the plain page. */
  readonly href: (full: string | undefined) => string;
  /** The CheckID whose output is shown in full (`?full=`). */
  readonly full?: string | undefined;
}

export function ChecksTable(props: ChecksTableProps) {
  const { caption, checks, href, full } = props;
  return (
    <table class="checks-table">
      <caption>{caption}</caption>
      <thead><tr><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Belongs to</th><th scope="col">Output</th><th scope="col">Notes</th></tr></thead>
      <tbody>
        {checks.map((c) => {
          const name = c.Name || c.CheckID;
          const whole = c.CheckID === full;
          const shown = whole ? { text: c.Output, truncated: false, bytes: 0 } : truncateOutput(c.Output ?? "");
          const rowId = checkRowId(c.CheckID);
          return (
            <tr data-check={c.CheckID} id={rowId}>
              <th scope="row">{name}{c.Name && c.Name !== c.CheckID ? <span class="check-id">{` ${c.CheckID}`}</span> : null}</th>
              <HealthCell health={c.Status} />
              <td>{c.ServiceID ? `service ${c.ServiceName || c.ServiceID}` : "the node"}{c.Type ? ` (${c.Type})` : ""}</td>
              <td>
                {shown.text ? <pre class="check-output">{shown.text}</pre> : <span class="detail-muted">no output</span>}
                {shown.truncated
                  ? (
                    <p class="detail-truncated">
                      {`Showing the first ${byteSize(OUTPUT_LIMIT_BYTES)} of ${byteSize(shown.bytes)}. `}
                      <a href={`${href(c.CheckID)}#${rowId}`} data-show-all>Show all<span class="detail-vh">{` output of ${name}`}</span></a>
                    </p>
                  )
                  : null}
                {whole && truncateOutput(c.Output ?? "").truncated
                  ? <p class="detail-truncated"><a href={`${href(undefined)}#${rowId}`}>Show less<span class="detail-vh">{` output of ${name}`}</span></a></p>
                  : null}
              </td>
              <td>{c.Notes || ""}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** CSS of the detail pages (node and instance): summaries, output blocks, screen-reader-only text, inline forms. */
export const DETAIL_CSS = `.detail-vh{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
pre.check-output{margin:0;white-space:pre-wrap;word-break:break-word;font-size:.85em;background:var(--head);padding:.4em;border-radius:4px}
.check-id{display:block;font-weight:400;font-size:.85em;color:var(--muted)}
.detail-truncated{margin:.3em 0 0;font-size:.9em;color:var(--muted)}
.detail-muted{color:var(--muted)}
dl.detail-summary{display:grid;grid-template-columns:max-content 1fr;gap:.2em 1em;margin:0 0 1em}dl.detail-summary dt{color:var(--muted)}dl.detail-summary dd{margin:0}
form.detail-inline{display:inline;margin:0}
.detail-notice{padding:.4em .6em;border-left:4px solid var(--accent);background:var(--head)}
`;
