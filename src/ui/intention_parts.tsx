/** @jsxImportSource hono/jsx */
/**
 * What the intentions pages share: the list's query (text and action filters), the rows table (the
 * API's order, which is precedence order, kept as is), the action in words with a symbol (never colour
 * alone), and the editor form's parsing and validation. Pure: data in, JSX or values out.
 */
import type { Intention, IntentionAction } from "../model/index.ts";
import { pageParam } from "./list_parts.tsx";
import type { BlockingWait, Indexed, UiContext } from "./page.ts";

/** The wildcard that stands for any service. */
export const ANY_SERVICE = "*";

/** `/v1/connect/intentions`: every intention, highest precedence first. */
export const INTENTIONS_PATH = "/v1/connect/intentions";

/** The intentions list of `dc` as `token`; blocking with `wait`. */
export function readIntentions(ctx: UiContext, dc: string, token: string | undefined, wait?: BlockingWait): Promise<Indexed<Intention[]>> {
  return ctx.read<Intention[]>(INTENTIONS_PATH, dc, token, wait);
}

export interface IntentionsQuery {
  /** Part of the source, destination or description, case-insensitive. */
  readonly s: string;
  readonly action: "" | IntentionAction;
  /** 1-based. */
  readonly page: number;
}

export function actionParam(v: string | undefined): "" | IntentionAction {
  return v === "allow" || v === "deny" ? v : "";
}

export function parseIntentionsQuery(get: (name: string) => string | undefined): IntentionsQuery {
  return { s: get("s") ?? "", action: actionParam(get("action")), page: pageParam(get("page")) };
}

/** The intentions matching `q`, in the order given (the API's precedence order). */
export function filterIntentions(all: readonly Intention[], q: Pick<IntentionsQuery, "s" | "action">): Intention[] {
  const s = q.s.toLowerCase();
  return all.filter((x) =>
    (q.action === "" || x.Action === q.action) &&
    (s === "" || [x.SourceName, x.DestinationName, x.Description].some((f) => f.toLowerCase().includes(s))));
}

/** The query string of `q` (page `p`), without empty values: for links and the live stream. */
export function intentionsQueryString(q: IntentionsQuery, p = q.page): string {
  const params = new URLSearchParams();
  if (q.s) params.set("s", q.s);
  if (q.action) params.set("action", q.action);
  if (p > 1) params.set("page", String(p));
  return params.toString();
}

/** "web → db" (a service name "*" reads "any service"). */
export function intentionTitle(x: Pick<Intention, "SourceName" | "DestinationName">): string {
  return `${serviceWords(x.SourceName)} → ${serviceWords(x.DestinationName)}`;
}

export function serviceWords(name: string): string {
  return name === ANY_SERVICE ? "* (any service)" : name;
}

/** The intentions whose source or destination is `service` (by name, as the API compares: case-insensitive), in the given order. */
export function intentionsOfService(all: readonly Intention[], service: string): Intention[] {
  const name = service.toLowerCase();
  return all.filter((x) => x.SourceName.toLowerCase() === name || x.DestinationName.toLowerCase() === name);
}

/** The link to an intention's editor. */
export function intentionHref(base: string, dc: string, id: string): string {
  return `${base}${encodeURIComponent(dc)}/intentions/${encodeURIComponent(id)}`;
}

/** A table cell with the action as a word and a symbol (hidden from screen readers). */
export function ActionCell(props: { readonly action: string }) {
  const allow = props.action === "allow";
  return <td class={allow ? "ixn-allow" : "ixn-deny"}><span aria-hidden="true">{allow ? "✓ " : "✕ "}</span>{props.action}</td>;
}

/** The intentions table: one row per intention (data-intention = its ID), each with a link to its editor. */
export function IntentionsTable(props: { readonly base: string; readonly dc: string; readonly caption: string; readonly rows: readonly Intention[] }) {
  const { base, dc, caption, rows } = props;
  return (
    <table id="intentions">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Source</th><th scope="col">Destination</th><th scope="col">Action</th><th scope="col">Precedence</th>
          <th scope="col">Description</th><th scope="col">Edit</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((x) => (
          <tr data-intention={x.ID}>
            <th scope="row">{serviceWords(x.SourceName)}</th>
            <td>{serviceWords(x.DestinationName)}</td>
            <ActionCell action={x.Action} />
            <td>{x.Precedence}</td>
            <td>{x.Description}</td>
            <td><a href={intentionHref(base, dc, x.ID)}>Edit<span class="ixn-vh">{` intention ${intentionTitle(x)}`}</span></a></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the editor form posts, as typed (kept to show the form again after an error). */
export interface IntentionForm {
  /** The picked service ("" none, "*" any). */
  readonly source: string;
  /** A name typed instead of picking one; wins when not empty. */
  readonly sourceOther: string;
  readonly destination: string;
  readonly destinationOther: string;
  readonly action: string;
  readonly description: string;
  /** The edited intention's ModifyIndex when the editor opened (edits only): detects a change by someone else. */
  readonly modifyIndex: string;
}

export const EMPTY_FORM: IntentionForm = { source: "", sourceOther: "", destination: "", destinationOther: "", action: "allow", description: "", modifyIndex: "" };

export function formOf(body: Record<string, unknown>): IntentionForm {
  const get = (k: string) => (typeof body[k] === "string" ? (body[k] as string) : "");
  return {
    source: get("source"), sourceOther: get("sourceOther"), destination: get("destination"), destinationOther: get("destinationOther"),
    action: get("action"), description: get("description"), modifyIndex: get("modifyIndex"),
  };
}

/** The editor showing `x` as it is stored. */
export function formOfIntention(x: Intention, listed: ReadonlySet<string>): IntentionForm {
  const pick = (name: string) => (name === ANY_SERVICE || listed.has(name) ? [name, ""] : ["", name]);
  const [source, sourceOther] = pick(x.SourceName);
  const [destination, destinationOther] = pick(x.DestinationName);
  return { source: source!, sourceOther: sourceOther!, destination: destination!, destinationOther: destinationOther!, action: x.Action, description: x.Description, modifyIndex: String(x.ModifyIndex) };
}

/** The fields an editor sets: the rest of a stored intention (namespaces, Meta) is kept on edit. */
export interface IntentionFields {
  readonly SourceName: string;
  readonly DestinationName: string;
  readonly Action: IntentionAction;
  readonly Description: string;
}

/** A field the form got wrong: its name in the form and the message naming it. */
export interface FieldError {
  readonly field: "source" | "destination" | "action" | "description";
  readonly message: string;
}

const MAX_NAME = 256;
const MAX_DESCRIPTION = 4096;

function nameOf(picked: string, other: string, label: string, field: "source" | "destination"): string | FieldError {
  const name = other.trim() || picked.trim();
  if (name === "") return { field, message: `${label}: choose a service, or type a name.` };
  if (name.length > MAX_NAME) return { field, message: `${label}: a service name has at most ${MAX_NAME} characters.` };
  if (/[\s/]/.test(name)) return { field, message: `${label}: a service name has no spaces or slashes (got ${JSON.stringify(name)}).` };
  return name;
}

/** The intention the form asks for, or the first field it got wrong. */
export function validateForm(f: IntentionForm): IntentionFields | FieldError {
  const source = nameOf(f.source, f.sourceOther, "Source", "source");
  if (typeof source !== "string") return source;
  const destination = nameOf(f.destination, f.destinationOther, "Destination", "destination");
  if (typeof destination !== "string") return destination;
  if (f.action !== "allow" && f.action !== "deny") return { field: "action", message: `Action: choose allow or deny (got ${JSON.stringify(f.action)}).` };
  if (f.description.length > MAX_DESCRIPTION) return { field: "description", message: `Description: at most ${MAX_DESCRIPTION} characters.` };
  return { SourceName: source, DestinationName: destination, Action: f.action, Description: f.description.trim() };
}

/** The JSON body of a create (POST) or, with the stored intention, of an edit (PUT: it replaces every field, so the others are kept). */
export function intentionBody(fields: IntentionFields, stored?: Intention): string {
  if (!stored) return JSON.stringify(fields);
  return JSON.stringify({
    SourceNS: stored.SourceNS, SourceName: fields.SourceName, DestinationNS: stored.DestinationNS, DestinationName: fields.DestinationName,
    SourceType: stored.SourceType, Action: fields.Action, Description: fields.Description, Meta: stored.Meta,
  });
}

/** CSS of the intentions pages (the theme's variables: AA contrast in light and dark). */
export const INTENTIONS_CSS = `.ixn-allow{color:var(--ok)}.ixn-deny{color:var(--crit)}
.ixn-vh{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
form.ixn-edit{display:grid;gap:1em;max-width:40em}form.ixn-edit fieldset{border:1px solid var(--line);border-radius:4px;padding:.6em 1em;margin:0}
form.ixn-edit label{display:flex;flex-direction:column;gap:.2em}form.ixn-edit .ixn-radio{flex-direction:row;align-items:center}
form.ixn-edit textarea{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:4px;padding:.3em .5em}
.ixn-error{color:var(--crit);border-left:4px solid var(--crit);padding:.3em .8em;white-space:pre-line}
.ixn-notice{border-left:4px solid var(--warn);padding:.3em .8em}
.ixn-actions{display:flex;gap:1em;align-items:center;flex-wrap:wrap}
dialog.ixn-dialog{background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:6px;max-width:30em}dialog.ixn-dialog::backdrop{background:#0008}
`;
