/** @jsxImportSource hono/jsx */
/**
 * The intention editor (Consul's /ui/:dc/intentions/create and /ui/:dc/intentions/:id): source and
 * destination pickers listing the services of every datacenter (a <select> with one <optgroup> per
 * datacenter, plus "*" for any service, and a text field for a name no datacenter lists yet), the
 * action and the description; an error in words (role=alert) with the form kept as typed; on an edit,
 * a "changed since you opened it" notice (pushed live, never a refresh of the form) and a delete that
 * asks first (a confirmation page; with JavaScript, a <dialog>). Pure: data in, JSX out.
 */
import type { Child } from "hono/jsx";
import type { Intention } from "../model/index.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import { ANY_SERVICE, intentionHref, intentionTitle, type FieldError, type IntentionForm } from "./intention_parts.tsx";

/** One datacenter's services for the pickers; `error` when they could not be listed. */
export interface DatacenterServices {
  readonly dc: string;
  readonly services: readonly string[];
  readonly error?: string;
}

/** Every service name any datacenter lists. */
export function listedNames(choices: readonly DatacenterServices[]): Set<string> {
  return new Set(choices.flatMap((c) => c.services));
}

export const ERROR_ID = "ixn-error";

function ServicePicker(props: {
  readonly side: "source" | "destination"; readonly legend: string; readonly picked: string; readonly other: string;
  readonly choices: readonly DatacenterServices[]; readonly invalid: boolean;
}) {
  const { side, legend, picked, other, choices, invalid } = props;
  let marked = picked === "" || picked === ANY_SERVICE;
  // A name listed by several datacenters is one value: only its first option is marked selected.
  const option = (name: string) => {
    const selected = !marked && name === picked;
    if (selected) marked = true;
    return <option value={name} selected={selected}>{name}</option>;
  };
  const described = invalid ? ERROR_ID : undefined;
  return (
    <fieldset>
      <legend>{legend}</legend>
      <label>Service
        <select name={side} id={`ixn-${side}`} aria-invalid={invalid ? "true" : undefined} aria-describedby={described}>
          <option value="" selected={picked === ""}>Choose a service</option>
          <optgroup label="Any datacenter"><option value={ANY_SERVICE} selected={picked === ANY_SERVICE}>* (any service)</option></optgroup>
          {choices.map((c) => (
            <optgroup label={c.error ? `${c.dc} (its services could not be listed)` : c.dc} data-dc={c.dc}>{c.services.map(option)}</optgroup>
          ))}
        </select>
      </label>
      <label>Or a name no datacenter lists yet
        <input type="text" name={`${side}Other`} id={`ixn-${side}-other`} value={other} autocomplete="off" aria-invalid={invalid ? "true" : undefined} aria-describedby={described} />
      </label>
    </fieldset>
  );
}

/** Where the editor stands: a new intention, or the stored one being edited. */
export type EditorSubject = { readonly kind: "create" } | { readonly kind: "edit"; readonly intention: Intention };

export function IntentionEditor(props: {
  readonly frame: PageFrame; readonly subject: EditorSubject; readonly form: IntentionForm; readonly choices: readonly DatacenterServices[];
  /** A field the form got wrong, or the API's refusal in words. */
  readonly error?: FieldError | string | undefined;
  /** Edits: the live stream of the "changed since you opened it" notice, and the notice as rendered now. */
  readonly live?: { readonly url: string; readonly index: number } | undefined;
  readonly notice?: Child;
}) {
  const { frame, subject, form, choices, error } = props;
  const { base, dc } = frame;
  const editing = subject.kind === "edit" ? subject.intention : undefined;
  const action = editing ? intentionHref(base, dc, editing.ID) : `${base}${encodeURIComponent(dc)}/intentions/create`;
  const field = typeof error === "object" ? error.field : undefined;
  const title = editing ? `Edit intention ${intentionTitle(editing)}` : "Create an intention";
  const choicesFailed = choices.filter((c) => c.error);
  return (
    <Layout {...frame} section="intentions" title={title} live={props.live}>
      <nav aria-label="Breadcrumb"><a href={`${base}${encodeURIComponent(dc)}/intentions`}>All intentions</a></nav>
      {editing ? <div id="intention-changed">{props.notice}</div> : null}
      {error ? <p role="alert" class="ixn-error" id={ERROR_ID}>{typeof error === "string" ? error : error.message}</p> : null}
      {choicesFailed.length > 0
        ? <p>{`The services of ${choicesFailed.map((c) => `${c.dc} (${c.error})`).join(", ")} could not be listed; type a name instead.`}</p>
        : null}
      <form method="post" action={action} class="ixn-edit">
        <ServicePicker side="source" legend="Source: the service that connects" picked={form.source} other={form.sourceOther} choices={choices} invalid={field === "source"} />
        <ServicePicker side="destination" legend="Destination: the service connected to" picked={form.destination} other={form.destinationOther} choices={choices} invalid={field === "destination"} />
        <fieldset>
          <legend>Action</legend>
          <label class="ixn-radio"><input type="radio" name="action" value="allow" checked={form.action === "allow"} /> Allow: the source may connect</label>
          <label class="ixn-radio"><input type="radio" name="action" value="deny" checked={form.action === "deny"} /> Deny: the source may not connect</label>
        </fieldset>
        <label>Description
          <textarea name="description" id="ixn-description" rows={3} aria-invalid={field === "description" ? "true" : undefined}
            aria-describedby={field === "description" ? ERROR_ID : undefined}>{form.description}</textarea>
        </label>
        {editing ? <input type="hidden" name="modifyIndex" value={form.modifyIndex} /> : null}
        <div class="ixn-actions">
          <button type="submit">{editing ? "Save intention" : "Create intention"}</button>
          {editing
            ? <a href={`${intentionHref(base, dc, editing.ID)}/delete`} data-ixn-dialog="ixn-delete">Delete this intention</a>
            : null}
        </div>
      </form>
      {editing ? <DeleteDialog base={base} dc={dc} intention={editing} /> : null}
    </Layout>
  );
}

/** The delete confirmation as a <dialog> (opened by the client script in place of the confirmation page; Esc closes it). */
function DeleteDialog(props: { readonly base: string; readonly dc: string; readonly intention: Intention }) {
  const { base, dc, intention } = props;
  return (
    <dialog id="ixn-delete" class="ixn-dialog" aria-labelledby="ixn-delete-title">
      <h2 id="ixn-delete-title">Delete this intention?</h2>
      <DeleteQuestion intention={intention} />
      <div class="ixn-actions">
        <form method="post" action={`${intentionHref(base, dc, intention.ID)}/delete`}><button type="submit">Delete intention</button></form>
        <form method="dialog"><button type="submit">Cancel</button></form>
      </div>
    </dialog>
  );
}

function DeleteQuestion(props: { readonly intention: Intention }) {
  const x = props.intention;
  return <p>{`The intention ${intentionTitle(x)} (${x.Action}) will be deleted; connections are then decided by the other intentions and the default policy. This cannot be undone.`}</p>;
}

/** The confirmation page of a delete (works without JavaScript): a POST form, or back to the editor. */
export function DeleteConfirmPage(props: { readonly frame: PageFrame; readonly intention: Intention; readonly error?: string | undefined }) {
  const { frame, intention, error } = props;
  const href = intentionHref(frame.base, frame.dc, intention.ID);
  return (
    <Layout {...frame} section="intentions" title={`Delete intention ${intentionTitle(intention)}?`}>
      {error ? <p role="alert" class="ixn-error" id={ERROR_ID}>{error}</p> : null}
      <DeleteQuestion intention={intention} />
      <div class="ixn-actions">
        <form method="post" action={`${href}/delete`}><button type="submit">Delete intention</button></form>
        <a href={href}>Cancel, keep it</a>
      </div>
    </Layout>
  );
}

/**
 * The editor's notice about the stored intention (the `intention-changed` fragment's content): nothing
 * while it is as the editor opened it (`opened` = its ModifyIndex then); else what changed.
 */
export function ChangedNotice(props: { readonly opened: number; readonly current: Intention | undefined }) {
  const { opened, current } = props;
  if (current === undefined) return <p class="ixn-notice" id="live-counts">This intention was deleted since you opened it: saving it fails; go back to all intentions.</p>;
  if (current.ModifyIndex === opened) return null;
  return (
    <p class="ixn-notice" id="live-counts">
      {`This intention changed since you opened it (index ${opened}→${current.ModifyIndex}): it is now ${intentionTitle(current)}, ${current.Action}${current.Description ? `, "${current.Description}"` : ""}. Saving replaces it with this form; reload to start from the new values.`}
    </p>
  );
}

/** The client script: a link with data-ixn-dialog opens that <dialog> instead of navigating (the page it leads to works without JS). */
export const INTENTION_CLIENT = `document.addEventListener("click",e=>{const a=e.target instanceof Element&&e.target.closest("a[data-ixn-dialog]");if(!a)return;const d=document.getElementById(a.dataset.ixnDialog);if(d&&d.showModal){e.preventDefault();d.showModal();}});`;
