/** @jsxImportSource hono/jsx */
/**
 * The editor's routes: GET/POST /ui/:dc/intentions/create (POST /v1/connect/intentions), GET/POST
 * /ui/:dc/intentions/:id (PUT /v1/connect/intentions/:id, refused with 409 and the form kept when the
 * intention changed since the editor opened), GET/POST /ui/:dc/intentions/:id/delete (a confirmation,
 * then DELETE /v1/connect/intentions/:id); each write answers 303 to the list. Bad input answers 400
 * naming the field and writes nothing; an API refusal is shown in words with the form kept, with the
 * API's status. Plus the editor's live topic (the "changed since you opened it" notice).
 */
import type { Context, Hono } from "hono";
import type { Intention } from "../model/index.ts";
import { ChangedNotice, DeleteConfirmPage, IntentionEditor, listedNames, type DatacenterServices, type EditorSubject } from "./intention_form.tsx";
import {
  ANY_SERVICE, EMPTY_FORM, formOf, formOfIntention, intentionBody, INTENTIONS_PATH, intentionTitle, readIntentions, validateForm,
  type FieldError, type IntentionForm,
} from "./intention_parts.tsx";
import { ApiError, type QueryGetter, type UiContext } from "./page.ts";

/** The services of every datacenter (each read on its own: one that fails is named, the others still listed). */
export async function readChoices(ctx: UiContext, token: string | undefined): Promise<DatacenterServices[]> {
  const dcs = await ctx.deps.datacenters();
  return Promise.all(dcs.map(async (dc) => {
    try {
      const read = await ctx.read<Record<string, readonly string[]>>("/v1/catalog/services", dc, token);
      return { dc, services: Object.keys(read.value).sort() };
    } catch (err) {
      return { dc, services: [], error: errorWords(err) };
    }
  }));
}

/**
 * An API refusal in words: a permission refusal says so; go-multierror's list ("1 error occurred:\n\t* X")
 * becomes its items.
 */
export function errorWords(err: unknown): string {
  const raw = ((err as Error)?.message ?? String(err)).trim();
  const items = [...raw.matchAll(/^\s*\* (.+)$/gm)].map((m) => m[1]!.trim());
  const text = items.length > 0 ? items.join("; ") : raw;
  if (err instanceof ApiError && err.status === 403) return `Your token may not do this (${text}).`;
  return `The agent refused: ${text}.`.replace(/\.\.$/, ".");
}

/** The API's status of a refusal (500 when it is not an API answer). */
function statusOf(err: unknown): number {
  return err instanceof ApiError && err.status >= 400 ? err.status : 500;
}

const intentionPath = (id: string) => `${INTENTIONS_PATH}/${encodeURIComponent(id)}`;

/** A form prefilled from the query (?source=, ?destination=): listed names and "*" picked, others typed. */
export function prefilled(get: QueryGetter, listed: ReadonlySet<string>): IntentionForm {
  const side = (name: string | undefined) => (!name ? ["", ""] : name === ANY_SERVICE || listed.has(name) ? [name, ""] : ["", name]);
  const [source, sourceOther] = side(get("source"));
  const [destination, destinationOther] = side(get("destination"));
  return { ...EMPTY_FORM, source: source!, sourceOther: sourceOther!, destination: destination!, destinationOther: destinationOther! };
}

export function mountIntentionEditor(app: Hono, ctx: UiContext): void {
  const { base } = ctx;
  const listHref = (dc: string, done: string) => `${base}${encodeURIComponent(dc)}/intentions?${done}`;

  /** The editor page (with the pickers' `read` when already done); an edit's live notice starts after `index` (the read the page shows). */
  const editor = async (c: Context, dc: string, subject: EditorSubject, form: IntentionForm, status: number, error?: FieldError | string, index = 0, read?: DatacenterServices[]) => {
    const token = ctx.token(c);
    const x = subject.kind === "edit" ? subject.intention : undefined;
    const opened = Number(form.modifyIndex) || x?.ModifyIndex || 0;
    const live = x
      ? { url: `${base}events?topic=intention-changed&dc=${encodeURIComponent(dc)}&id=${encodeURIComponent(x.ID)}&opened=${opened}`, index: Math.max(index, x.ModifyIndex) }
      : undefined;
    const notice = x ? <ChangedNotice opened={opened} current={x} /> : undefined;
    return ctx.html(c, (
      <IntentionEditor frame={await ctx.frame(c, dc)} subject={subject} form={form} choices={read ?? await readChoices(ctx, token)} error={error} live={live} notice={notice} />
    ), status);
  };
  const stored = (c: Context, dc: string) => ctx.read<Intention>(intentionPath(c.req.param("id") ?? ""), dc, ctx.token(c));
  const body = async (c: Context) => formOf(await c.req.parseBody().catch(() => ({})) as Record<string, unknown>);

  app.get(`${base}:dc/intentions/create`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const token = ctx.token(c);
    const choices = await readChoices(ctx, token);
    const form = prefilled((k) => c.req.query(k), listedNames(choices));
    return ctx.html(c, <IntentionEditor frame={await ctx.frame(c, dc)} subject={{ kind: "create" }} form={form} choices={choices} />);
  });

  app.post(`${base}:dc/intentions/create`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    const form = await body(c);
    const fields = validateForm(form);
    if ("field" in fields) return editor(c, dc, { kind: "create" }, form, 400, fields);
    try {
      const r = await ctx.call({ method: "POST", path: INTENTIONS_PATH, dc, token: ctx.token(c), body: intentionBody(fields) });
      const id = (JSON.parse(r.text) as { ID?: string }).ID ?? "";
      return c.redirect(listHref(dc, `created=${encodeURIComponent(id)}`), 303);
    } catch (err) {
      return editor(c, dc, { kind: "create" }, form, statusOf(err), errorWords(err));
    }
  });

  app.get(`${base}:dc/intentions/:id`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    let intention: Intention;
    let index: number;
    try {
      ({ value: intention, index } = await stored(c, dc));
    } catch (err) {
      return ctx.failure(c, dc, err, "intentions");
    }
    const choices = await readChoices(ctx, ctx.token(c));
    return editor(c, dc, { kind: "edit", intention }, formOfIntention(intention, listedNames(choices)), 200, undefined, index, choices);
  });

  app.post(`${base}:dc/intentions/:id`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    let intention: Intention;
    let index: number;
    try {
      ({ value: intention, index } = await stored(c, dc));
    } catch (err) {
      return ctx.failure(c, dc, err, "intentions");
    }
    const form = await body(c);
    const subject = { kind: "edit", intention } as const;
    const fields = validateForm(form);
    if ("field" in fields) return editor(c, dc, subject, form, 400, fields, index);
    if (form.modifyIndex !== String(intention.ModifyIndex)) {
      // Keep what the reader typed, now based on the stored version: saving again replaces that one.
      return editor(c, dc, subject, { ...form, modifyIndex: String(intention.ModifyIndex) }, 409,
        `Not saved: this intention changed since you opened it (index ${form.modifyIndex || "unknown"}→${intention.ModifyIndex}); it is now ` +
        `${intentionTitle(intention)}, ${intention.Action}. Save again to replace it with this form.`, index);
    }
    try {
      await ctx.call({ method: "PUT", path: intentionPath(intention.ID), dc, token: ctx.token(c), body: intentionBody(fields, intention) });
    } catch (err) {
      return editor(c, dc, subject, form, statusOf(err), errorWords(err), index);
    }
    return c.redirect(listHref(dc, `updated=${encodeURIComponent(intention.ID)}`), 303);
  });

  app.get(`${base}:dc/intentions/:id/delete`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    try {
      const { value } = await stored(c, dc);
      return ctx.html(c, <DeleteConfirmPage frame={await ctx.frame(c, dc)} intention={value} />);
    } catch (err) {
      return ctx.failure(c, dc, err, "intentions");
    }
  });

  app.post(`${base}:dc/intentions/:id/delete`, async (c) => {
    const dc = c.req.param("dc") ?? "";
    let intention: Intention;
    try {
      intention = (await stored(c, dc)).value;
    } catch (err) {
      return ctx.failure(c, dc, err, "intentions");
    }
    try {
      await ctx.call({ method: "DELETE", path: intentionPath(intention.ID), dc, token: ctx.token(c) });
    } catch (err) {
      return ctx.html(c, <DeleteConfirmPage frame={await ctx.frame(c, dc)} intention={intention} error={errorWords(err)} />, statusOf(err));
    }
    return c.redirect(listHref(dc, `deleted=${encodeURIComponent(`${intentionTitle(intention)} (${intention.Action})`)}`), 303);
  });
}

/** The editor's live topic: `?id=` and `?opened=` (its ModifyIndex when opened); pushes the notice when it changes or goes. */
export function changedTopic(ctx: UiContext, dc: string, token: string | undefined, get: QueryGetter) {
  const id = get("id") ?? "";
  const opened = Number(get("opened") ?? "0");
  return {
    read: (minIndex: number, maxWaitMs: number, signal: AbortSignal) => readIntentions(ctx, dc, token, { minIndex, maxWaitMs, signal }),
    render: async (all: unknown) => String(await String(
      <div id="intention-changed"><ChangedNotice opened={opened} current={(all as readonly Intention[]).find((x) => x.ID === id)} /></div>,
    )),
  };
}
