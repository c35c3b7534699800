/** @jsxImportSource hono/jsx */
/**
 * ACL roles (Consul's /ui/:dc/acls/roles, /:id, /create): the list (name, description, policies), a
 * role's page (its policies and identities, the tokens holding it) and, for a token that may write
 * ACLs, the editor (name, description, policies as checkboxes) and the delete form. Writes go through
 * `PUT /v1/acl/role[/:id]` and `DELETE /v1/acl/role/:id` as the reader's token; an edit of a role that
 * changed since the form was opened is refused (409). Service and node identities are kept as they are.
 */
import type { Context, Hono } from "hono";
import { checkConfirmed, checkRoleForm, formList, formText, type FormBody, type PolicyView, type RoleForm, type RoleView, type TokenView } from "./acl_access.ts";
import { badInput, DeleteForm, FormError, LinkChoices, LinkList, ListFilter, matches, SavedNotice } from "./acl_forms.tsx";
import type { AclSession } from "./acl_session.ts";
import { aclGate, aclHref, AclLayout, AclMessagePage } from "./acl_views.tsx";
import type { PageFrame } from "./layout.tsx";
import type { UiContext } from "./page.ts";

const identitiesText = (r: RoleView) =>
  [...(r.ServiceIdentities ?? []).map((s) => `service ${s.ServiceName}`), ...(r.NodeIdentities ?? []).map((n) => `node ${n.NodeName} (${n.Datacenter})`)].join(", ");

export function RolesList(props: { readonly frame: PageFrame; readonly session: AclSession; readonly all: readonly RoleView[]; readonly s: string; readonly c: Context }) {
  const { frame, session, all, s } = props;
  const { base, dc } = frame;
  const shown = all.filter((r) => matches(s.toLowerCase(), r.Name, r.Description));
  return (
    <AclLayout frame={frame} session={session} tab="roles" title="Roles">
      <SavedNotice c={props.c} what="role" />
      {session.canWrite ? <p><a class="acl-create" href={aclHref(base, dc, "roles/create")}>Create a role</a></p> : null}
      <ListFilter action={aclHref(base, dc, "roles")} value={s} label="Name or description" />
      <table id="acl-roles">
        <caption>{`Roles in ${dc}: ${shown.length} of ${all.length}`}</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">Policies</th><th scope="col">Identities</th></tr></thead>
        <tbody>
          {shown.map((r) => (
            <tr data-role={r.Name}>
              <th scope="row"><a href={aclHref(base, dc, `roles/${encodeURIComponent(r.ID)}`)}>{r.Name}</a></th>
              <td>{r.Description}</td>
              <td><LinkList base={base} dc={dc} kind="policies" links={r.Policies} /></td>
              <td>{identitiesText(r) || "none"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {shown.length === 0 ? <p>No roles match.</p> : null}
    </AclLayout>
  );
}

export function RoleEditor(props: {
  readonly action: string; readonly values: RoleForm; readonly policies: readonly PolicyView[]; readonly index?: number | undefined; readonly error?: string | undefined;
}) {
  const { values } = props;
  return (
    <form method="post" action={props.action} class="acl-form">
      <FormError message={props.error} />
      <label for="role-name">Name</label>
      <input id="role-name" name="name" value={values.Name} required pattern="[A-Za-z0-9_\-]{1,256}" />
      <label for="role-description">Description</label>
      <input id="role-description" name="description" value={values.Description} />
      <LinkChoices legend="Policies" name="policies" all={props.policies} selected={values.PolicyIDs} />
      {props.index !== undefined ? <input type="hidden" name="modify_index" value={String(props.index)} /> : null}
      <button type="submit">Save role</button>
    </form>
  );
}

export function RolePage(props: {
  readonly frame: PageFrame; readonly session: AclSession; readonly role: RoleView; readonly users: readonly TokenView[]; readonly policies: readonly PolicyView[];
  readonly c: Context; readonly edited?: RoleForm; readonly error?: string; readonly index?: number;
}) {
  const { frame, session, role, users } = props;
  const { base, dc } = frame;
  const self = aclHref(base, dc, `roles/${encodeURIComponent(role.ID)}`);
  const values: RoleForm = props.edited ?? { Name: role.Name, Description: role.Description, PolicyIDs: (role.Policies ?? []).map((l) => l.ID) };
  return (
    <AclLayout frame={frame} session={session} tab="roles" title={`Role ${role.Name}`}>
      <SavedNotice c={props.c} what="role" />
      {session.canWrite ? (
        <RoleEditor action={self} values={values} policies={props.policies} index={props.index ?? role.ModifyIndex} error={props.error} />
      ) : (
        <>
          <FormError message={props.error} />
          <dl class="acl-props">
            <dt>Name</dt><dd>{role.Name}</dd>
            <dt>Description</dt><dd>{role.Description || "none"}</dd>
            <dt>Policies</dt><dd><LinkList base={base} dc={dc} kind="policies" links={role.Policies} /></dd>
          </dl>
        </>
      )}
      <p>{`Identities: ${identitiesText(role) || "none"}.`}</p>
      <table id="acl-role-tokens">
        <caption>{`Tokens with the role ${role.Name}: ${users.length}`}</caption>
        <thead><tr><th scope="col">Accessor ID</th><th scope="col">Description</th></tr></thead>
        <tbody>
          {users.map((t) => <tr><th scope="row"><a href={aclHref(base, dc, `tokens/${t.AccessorID}`)}><code>{t.AccessorID}</code></a></th><td>{t.Description}</td></tr>)}
        </tbody>
      </table>
      {session.canWrite ? <DeleteForm action={`${self}/delete`} what="role" /> : null}
    </AclLayout>
  );
}

function NewRolePage(props: { readonly frame: PageFrame; readonly session: AclSession; readonly values: RoleForm; readonly policies: readonly PolicyView[]; readonly error?: string | undefined }) {
  const { frame } = props;
  return (
    <AclLayout frame={frame} session={props.session} tab="roles" title="New role">
      <RoleEditor action={aclHref(frame.base, frame.dc, "roles/create")} values={props.values} policies={props.policies} error={props.error} />
    </AclLayout>
  );
}

const form = (c: Context) => c.req.parseBody({ all: true }).catch(() => ({}) as FormBody) as Promise<FormBody>;
/** The form's values as typed, whatever their faults. */
const valuesOf = (body: FormBody): RoleForm => ({ Name: formText(body, "name"), Description: formText(body, "description"), PolicyIDs: formList(body, "policies") });
const bodyOf = (v: RoleForm, id?: string) => JSON.stringify({ ...(id ? { ID: id } : {}), Name: v.Name, Description: v.Description, Policies: v.PolicyIDs.map((ID) => ({ ID })) });

export function roleRoutes(app: Hono, ctx: UiContext): void {
  const path = `${ctx.base}:dc/acls/roles`;
  const policiesOf = async (dc: string, session: AclSession) => (await ctx.read<PolicyView[]>("/v1/acl/policies", dc, session.token)).value;

  app.get(path, (c) => aclGate(ctx, c, "roles", async (session, frame, dc) => {
    const all = (await ctx.read<RoleView[]>("/v1/acl/roles", dc, session.token)).value;
    return ctx.html(c, <RolesList frame={frame} session={session} all={all} s={c.req.query("s") ?? ""} c={c} />);
  }));
  app.get(`${path}/create`, (c) => aclGate(ctx, c, "roles", async (session, frame, dc) => {
    if (!session.canWrite) {
      return ctx.html(c, <AclMessagePage frame={frame} session={session} tab="roles" title="Not allowed" login message="Your token may not change roles." />, 403);
    }
    return ctx.html(c, <NewRolePage frame={frame} session={session} values={{ Name: "", Description: "", PolicyIDs: [] }} policies={await policiesOf(dc, session)} />);
  }));
  app.post(`${path}/create`, (c) => aclGate(ctx, c, "roles", async (session, frame, dc) => {
    const body = await form(c);
    const checked = checkRoleForm(body);
    const again = async (error: string) => ctx.html(c, <NewRolePage frame={frame} session={session} values={valuesOf(body)} policies={await policiesOf(dc, session)} error={error} />, 400);
    if (!checked.ok) return again(checked.message);
    try {
      const r = await ctx.call({ method: "PUT", path: "/v1/acl/role", dc, token: session.token, body: bodyOf(checked.value) });
      return c.redirect(aclHref(ctx.base, dc, `roles/${encodeURIComponent((JSON.parse(r.text) as RoleView).ID)}?saved=1`), 303);
    } catch (err) {
      const refused = badInput(err);
      if (!refused) throw err;
      return again(refused);
    }
  }));
  app.get(`${path}/:id`, (c) => aclGate(ctx, c, "roles", async (session, frame, dc) => {
    const { role, users } = await readRole(ctx, dc, session, c.req.param("id") ?? "");
    return ctx.html(c, <RolePage frame={frame} session={session} role={role} users={users} policies={session.canWrite ? await policiesOf(dc, session) : []} c={c} />);
  }));
  app.post(`${path}/:id`, (c) => aclGate(ctx, c, "roles", async (session, frame, dc) => {
    const id = c.req.param("id") ?? "";
    const body = await form(c);
    const checked = checkRoleForm(body);
    const { role, users } = await readRole(ctx, dc, session, id);
    const again = async (status: 400 | 409, error: string, index?: number) =>
      ctx.html(c, <RolePage frame={frame} session={session} role={role} users={users} policies={session.canWrite ? await policiesOf(dc, session) : []} c={c} edited={valuesOf(body)} error={error} index={index} />, status);
    if (!checked.ok) return again(400, checked.message);
    const opened = Number(formText(body, "modify_index") || "NaN");
    if (Number.isInteger(opened) && opened !== role.ModifyIndex) {
      return again(409, `This role changed since you opened it (index ${opened}→${role.ModifyIndex}). Review it and save again to overwrite.`, role.ModifyIndex);
    }
    // The form edits name, description and policies; the role's identities are sent back unchanged.
    const identities = { ...(role.ServiceIdentities ? { ServiceIdentities: role.ServiceIdentities } : {}), ...(role.NodeIdentities ? { NodeIdentities: role.NodeIdentities } : {}) };
    try {
      await ctx.call({ method: "PUT", path: `/v1/acl/role/${encodeURIComponent(id)}`, dc, token: session.token, body: JSON.stringify({ ...JSON.parse(bodyOf(checked.value, role.ID)), ...identities }) });
    } catch (err) {
      const refused = badInput(err);
      if (!refused) throw err;
      return again(400, refused);
    }
    return c.redirect(aclHref(ctx.base, dc, `roles/${encodeURIComponent(id)}?saved=1`), 303);
  }));
  app.post(`${path}/:id/delete`, (c) => aclGate(ctx, c, "roles", async (session, frame, dc) => {
    const id = c.req.param("id") ?? "";
    const confirmed = checkConfirmed(await form(c));
    if (!confirmed.ok) return ctx.html(c, <AclMessagePage frame={frame} session={session} tab="roles" title="Not deleted" message={confirmed.message} />, 400);
    const { role } = await readRole(ctx, dc, session, id);
    await ctx.call({ method: "DELETE", path: `/v1/acl/role/${encodeURIComponent(id)}`, dc, token: session.token });
    return c.redirect(aclHref(ctx.base, dc, `roles?deleted=${encodeURIComponent(role.Name)}`), 303);
  }));
}

async function readRole(ctx: UiContext, dc: string, session: AclSession, id: string): Promise<{ role: RoleView; users: TokenView[] }> {
  const role = (await ctx.read<RoleView>(`/v1/acl/role/${encodeURIComponent(id)}`, dc, session.token)).value;
  const users = (await ctx.read<TokenView[]>(`/v1/acl/tokens?role=${encodeURIComponent(role.ID)}`, dc, session.token)).value;
  return { role, users };
}
