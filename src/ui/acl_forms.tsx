/** @jsxImportSource hono/jsx */
/**
 * Pieces the ACL editors share: the form error line (names the field), link pickers (policies or roles
 * as checkboxes, by ID), the delete form (a required confirmation box, so it works without JavaScript),
 * the list filter, and how an ACL write's refusal is answered (400: the form again with the API's
 * words; 403 and the rest: aclProblem). Links lists render as "a, b" with links to each object.
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { AclLink } from "../model/index.ts";
import { aclHref } from "./acl_views.tsx";
import { ApiError } from "./page.ts";

/** A form's error, announced: "Name: ..." names the field at fault. */
export function FormError(props: { readonly message?: string | undefined }) {
  return props.message ? <p role="alert" class="acl-error" id="acl-form-error">{props.message}</p> : null;
}

/** A notice after a successful write (`?saved=1`, `?deleted=name`). */
export function SavedNotice(props: { readonly c: Context; readonly what: string }) {
  const { c, what } = props;
  if (c.req.query("saved") === "1") return <p role="status" id="acl-saved">{`Saved the ${what}.`}</p>;
  const deleted = c.req.query("deleted");
  return deleted ? <p role="status" id="acl-saved">{`Deleted the ${what} ${deleted}.`}</p> : null;
}

/** Checkboxes named `name`, one per object, ticked when its ID is in `selected`. */
export function LinkChoices(props: {
  readonly legend: string; readonly name: string; readonly all: readonly { readonly ID: string; readonly Name: string }[]; readonly selected: readonly string[];
}) {
  const { legend, name, all, selected } = props;
  return (
    <fieldset>
      <legend>{legend}</legend>
      {all.length === 0 ? <p>None exist yet.</p> : null}
      {all.map((o) => (
        <label><input type="checkbox" name={name} value={o.ID} checked={selected.includes(o.ID)} /> {o.Name}</label>
      ))}
    </fieldset>
  );
}

/** Links to the objects named by `links` (kind "policies" or "roles"), comma separated; `empty` when none. */
export function LinkList(props: { readonly base: string; readonly dc: string; readonly kind: "policies" | "roles"; readonly links?: readonly AclLink[] | undefined; readonly empty?: string }) {
  const { base, dc, kind, links } = props;
  if (!links || links.length === 0) return <>{props.empty ?? "none"}</>;
  const parts: Child[] = [];
  links.forEach((l, i) => {
    if (i > 0) parts.push(", ");
    parts.push(<a href={aclHref(base, dc, `${kind}/${encodeURIComponent(l.ID)}`)}>{l.Name}</a>);
  });
  return <>{parts}</>;
}

/** The delete form of one object: a confirmation box that must be ticked. */
export function DeleteForm(props: { readonly action: string; readonly what: string }) {
  return (
    <form method="post" action={props.action} class="acl-delete">
      <h2>{`Delete this ${props.what}`}</h2>
      <label><input type="checkbox" name="confirm" value="yes" required /> {`Yes, delete this ${props.what}. This cannot be undone.`}</label>
      <button type="submit">{`Delete ${props.what}`}</button>
    </form>
  );
}

/** A list's name filter (a GET form; "/" focuses it). */
export function ListFilter(props: { readonly action: string; readonly value: string; readonly label: string }) {
  return (
    <form class="filters" method="get" action={props.action} role="search">
      <label>{props.label}<input type="search" name="s" value={props.value} data-filter aria-keyshortcuts="/" /></label>
      <button type="submit">Filter</button>
    </form>
  );
}

/** Whether `needle` (lower case) is in any of `texts`. */
export const matches = (needle: string, ...texts: readonly (string | undefined)[]) => needle === "" || texts.some((t) => (t ?? "").toLowerCase().includes(needle));

/** A write the API refused as bad input (400): its words, for the form. Undefined for any other failure. */
export function badInput(err: unknown): string | undefined {
  return err instanceof ApiError && err.status === 400 ? `The agent refused this: ${err.message}` : undefined;
}
