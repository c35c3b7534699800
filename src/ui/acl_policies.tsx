/** @jsxImportSource hono/jsx */
/**
 * ACL policies (Consul's /ui/:dc/acls/policies, /:id, /create): the list (name, description,
 * datacenters), a policy's page (its rules, the tokens using it) and, for a token that may write ACLs,
 * the editor (name, description, rules as HCL or JSON, datacenters) and the delete form. Writes go
 * through `PUT /v1/acl/policy[/:id]` and `DELETE /v1/acl/policy/:id` as the reader's token; an edit
 * of a policy that changed since the form was opened is refused (409) with both indexes.
 */
import type { Context, Hono } from "hono";
import { GLOBAL_MANAGEMENT_POLICY_ID } from "../model/index.ts";
import { checkConfirmed, checkPolicyForm, formList, formText, type FormBody, type PolicyForm, type PolicyView, type TokenView } from "./acl_access.ts";
import { badInput, DeleteForm, FormError, ListFilter, matches, SavedNotice } from "./acl_forms.tsx";
import type { AclSession } from "./acl_session.ts";
import { aclGate, aclHref, AclLayout, AclMessagePage } from "./acl_views.tsx";
import type { PageFrame } from "./layout.tsx";
import type { UiContext } from "./page.ts";

const datacentersText = (p: PolicyView) => (p.Datacenters && p.Datacenters.length ? p.Datacenters.join(", ") : "all");

export function PoliciesList(props: { readonly frame: PageFrame; readonly session: AclSession; readonly all: readonly PolicyView[]; readonly s: string; readonly c: Context }) {
  const { frame, session, all, s } = props;
  const { base, dc } = frame;
  const shown = all.filter((p) => matches(s.toLowerCase(), p.Name, p.Description));
  return (
    <AclLayout frame={frame} session={session} tab="policies" title="Policies">
      <SavedNotice c={props.c} what="policy" />
      {session.canWrite ? <p><a class="acl-create" href={aclHref(base, dc, "policies/create")}>Create a policy</a></p> : null}
      <ListFilter action={aclHref(base, dc, "policies")} value={s} label="Name or description" />
      <table id="acl-policies">
        <caption>{`Policies in ${dc}: ${shown.length} of ${all.length}`}</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Datacenters</th></tr></thead>
        <tbody>
          {shown.map((p) => (
            <tr data-policy={p.Name}>
              <th scope="row"><a href={aclHref(base, dc, `policies/${encodeURIComponent(p.ID)}`)}>{p.Name}</a></th>
              <td>{p.Description}</td>
              <td>{datacentersText(p)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {shown.length === 0 ? <p>No policies match.</p> : null}
    </AclLayout>
  );
}

/** The policy editor; `index` is the ModifyIndex it was opened at (an edit), `error` the field at fault. */
export function PolicyEditor(props: {
  readonly action: string; readonly values: PolicyForm; readonly index?: number | undefined;
  readonly error?: string | undefined; readonly builtin?: boolean; readonly datacenters: readonly string[];
}) {
  const { values, datacenters } = props;
  const choices = [...new Set([...datacenters, ...values.Datacenters])];
  return (
    <form method="post" action={props.action} class="acl-form">
      <FormError message={props.error} />
      <label for="policy-name">Name</label>
      <input id="policy-name" name="name" value={values.Name} required pattern="[A-Za-z0-9_\-]{1,128}" />
      <label for="policy-description">Description</label>
      <input id="policy-description" name="description" value={values.Description} />
      <label for="policy-rules">Rules (HCL or JSON)</label>
      {/* A textarea drops the newline right after its start tag: one is added so that the rules come back as they are. */}
      <textarea id="policy-rules" name="rules" rows={12} spellcheck={false} readonly={props.builtin}>{`\n${values.Rules}`}</textarea>
      <fieldset>
        <legend>Datacenters where it applies (none ticked: all)</legend>
        {choices.map((d) => <label><input type="checkbox" name="datacenters" value={d} checked={values.Datacenters.includes(d)} /> {d}</label>)}
      </fieldset>
      {props.index !== undefined ? <input type="hidden" name="modify_index" value={String(props.index)} /> : null}
      <button type="submit">Save policy</button>
    </form>
  );
}

export function PolicyPage(props: {
  readonly frame: PageFrame; readonly session: AclSession; readonly policy: PolicyView; readonly users: readonly TokenView[]; readonly c: Context;
  readonly datacenters: readonly string[]; readonly edited?: PolicyForm; readonly error?: string; readonly index?: number;
}) {
  const { frame, session, policy, users } = props;
  const { base, dc } = frame;
  const builtin = policy.ID === GLOBAL_MANAGEMENT_POLICY_ID;
  const values: PolicyForm = props.edited ?? { Name: policy.Name, Description: policy.Description, Rules: policy.Rules ?? "", Datacenters: policy.Datacenters ?? [] };
  const self = aclHref(base, dc, `policies/${encodeURIComponent(policy.ID)}`);
  return (
    <AclLayout frame={frame} session={session} tab="policies" title={`Policy ${policy.Name}`}>
      <SavedNotice c={props.c} what="policy" />
      {session.canWrite ? null : <FormError message={props.error} />}
      {builtin ? <p>This is the built-in policy that grants unlimited access: it can be renamed, but its rules cannot change and it cannot be deleted.</p> : null}
      {session.canWrite ? (
        <PolicyEditor action={self} values={values} index={props.index ?? policy.ModifyIndex} error={props.error} builtin={builtin} datacenters={props.datacenters} />
      ) : (
        <dl class="acl-props">
          <dt>Name</dt><dd>{policy.Name}</dd>
          <dt>Description</dt><dd>{policy.Description || "none"}</dd>
          <dt>Datacenters</dt><dd>{datacentersText(policy)}</dd>
          <dt>Rules</dt><dd><pre class="acl-rules">{policy.Rules ?? ""}</pre></dd>
        </dl>
      )}
      <table id="acl-policy-tokens">
        <caption>{`Tokens using ${policy.Name}: ${users.length}`}</caption>
        <thead><tr><th scope="col">Accessor ID</th><th scope="col">Description</th></tr></thead>
        <tbody>
          {users.map((t) => <tr><th scope="row"><a href={aclHref(base, dc, `tokens/${t.AccessorID}`)}><code>{t.AccessorID}</code></a></th><td>{t.Description}</td></tr>)}
        </tbody>
      </table>
      {session.canWrite && !builtin ? <DeleteForm action={`${self}/delete`} what="policy" /> : null}
    </AclLayout>
  );
}

const EMPTY: PolicyForm = { Name: "", Description: "", Rules: "", Datacenters: [] };

function NewPolicyPage(props: { readonly frame: PageFrame; readonly session: AclSession; readonly values: PolicyForm; readonly error?: string | undefined; readonly datacenters: readonly string[] }) {
  const { frame } = props;
  return (
    <AclLayout frame={frame} session={props.session} tab="policies" title="New policy">
      <PolicyEditor action={aclHref(frame.base, frame.dc, "policies/create")} values={props.values} error={props.error} datacenters={props.datacenters} />
    </AclLayout>
  );
}

const form = (c: Context) => c.req.parseBody({ all: true }).catch(() => ({}) as FormBody) as Promise<FormBody>;

export function policyRoutes(app: Hono, ctx: UiContext): void {
  const path = `${ctx.base}:dc/acls/policies`;
  const noWrite = (c: Context, session: AclSession, frame: PageFrame) =>
    ctx.html(c, <AclMessagePage frame={frame} session={session} tab="policies" title="Not allowed" login message="Your token may not change policies." />, 403);

  app.get(path, (c) => aclGate(ctx, c, "policies", async (session, frame, dc) => {
    const all = (await ctx.read<PolicyView[]>("/v1/acl/policies", dc, session.token)).value;
    return ctx.html(c, <PoliciesList frame={frame} session={session} all={all} s={c.req.query("s") ?? ""} c={c} />);
  }));
  app.get(`${path}/create`, (c) => aclGate(ctx, c, "policies", async (session, frame, dc) => {
    if (!session.canWrite) return noWrite(c, session, frame);
    return ctx.html(c, <NewPolicyPage frame={frame} session={session} values={EMPTY} datacenters={await ctx.switcher(dc)} />);
  }));
  app.post(`${path}/create`, (c) => aclGate(ctx, c, "policies", async (session, frame, dc) => {
    const body = await form(c);
    const checked = checkPolicyForm(body);
    const datacenters = await ctx.switcher(dc);
    if (!checked.ok) return ctx.html(c, <NewPolicyPage frame={frame} session={session} values={valuesOf(body)} error={checked.message} datacenters={datacenters} />, 400);
    try {
      const r = await ctx.call({ method: "PUT", path: "/v1/acl/policy", dc, token: session.token, body: JSON.stringify(checked.value) });
      return c.redirect(aclHref(ctx.base, dc, `policies/${encodeURIComponent((JSON.parse(r.text) as PolicyView).ID)}?saved=1`), 303);
    } catch (err) {
      const refused = badInput(err);
      if (!refused) throw err;
      return ctx.html(c, <NewPolicyPage frame={frame} session={session} values={checked.value} error={refused} datacenters={datacenters} />, 400);
    }
  }));
  app.get(`${path}/:id`, (c) => aclGate(ctx, c, "policies", async (session, frame, dc) => {
    const { policy, users } = await readPolicy(ctx, dc, session, c.req.param("id") ?? "");
    return ctx.html(c, <PolicyPage frame={frame} session={session} policy={policy} users={users} c={c} datacenters={await ctx.switcher(dc)} />);
  }));
  app.post(`${path}/:id`, (c) => aclGate(ctx, c, "policies", async (session, frame, dc) => {
    const id = c.req.param("id") ?? "";
    const body = await form(c);
    const checked = checkPolicyForm(body);
    const { policy, users } = await readPolicy(ctx, dc, session, id);
    const datacenters = await ctx.switcher(dc);
    const again = (status: 400 | 409, error: string, index?: number) =>
      ctx.html(c, <PolicyPage frame={frame} session={session} policy={policy} users={users} c={c} datacenters={datacenters} edited={valuesOf(body)} error={error} index={index} />, status);
    if (!checked.ok) return again(400, checked.message);
    const opened = Number(formText(body, "modify_index") || "NaN");
    if (Number.isInteger(opened) && opened !== policy.ModifyIndex) {
      return again(409, `This policy changed since you opened it (index ${opened}→${policy.ModifyIndex}). Review it and save again to overwrite.`, policy.ModifyIndex);
    }
    try {
      await ctx.call({ method: "PUT", path: `/v1/acl/policy/${encodeURIComponent(id)}`, dc, token: session.token, body: JSON.stringify({ ID: policy.ID, ...checked.value }) });
    } catch (err) {
      const refused = badInput(err);
      if (!refused) throw err;
      return again(400, refused);
    }
    return c.redirect(aclHref(ctx.base, dc, `policies/${encodeURIComponent(id)}?saved=1`), 303);
  }));
  app.post(`${path}/:id/delete`, (c) => aclGate(ctx, c, "policies", async (session, frame, dc) => {
    const id = c.req.param("id") ?? "";
    const confirmed = checkConfirmed(await form(c));
    if (!confirmed.ok) return ctx.html(c, <AclMessagePage frame={frame} session={session} tab="policies" title="Not deleted" message={confirmed.message} />, 400);
    const { policy } = await readPolicy(ctx, dc, session, id);
    await ctx.call({ method: "DELETE", path: `/v1/acl/policy/${encodeURIComponent(id)}`, dc, token: session.token });
    return c.redirect(aclHref(ctx.base, dc, `policies?deleted=${encodeURIComponent(policy.Name)}`), 303);
  }));
}

/** The form's values as typed (for showing them again), whatever their faults. */
function valuesOf(body: FormBody): PolicyForm {
  const checked = checkPolicyForm(body);
  if (checked.ok) return checked.value;
  return { Name: formText(body, "name"), Description: formText(body, "description"), Rules: formText(body, "rules"), Datacenters: formList(body, "datacenters") };
}

async function readPolicy(ctx: UiContext, dc: string, session: AclSession, id: string): Promise<{ policy: PolicyView; users: TokenView[] }> {
  const policy = (await ctx.read<PolicyView>(`/v1/acl/policy/${encodeURIComponent(id)}`, dc, session.token)).value;
  const users = (await ctx.read<TokenView[]>(`/v1/acl/tokens?policy=${encodeURIComponent(policy.ID)}`, dc, session.token)).value;
  return { policy, users };
}
