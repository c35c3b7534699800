/** @jsxImportSource hono/jsx */
/**
 * What every ACL page shares: the frame (the Access Controls section, tabs for tokens, policies and
 * roles, a line saying which token is in use with a Log out button), the login form (a token
 * SecretID, posted to /acls/login), the page shown when ACLs are off, and `aclGate`, which answers
 * those states before a page reads anything and turns a refused read or write into words.
 */
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import { refusalOf, shortId } from "./acl_access.ts";
import { aclSession, type AclSession } from "./acl_session.ts";
import { Layout, type PageFrame } from "./layout.tsx";
import type { UiContext } from "./page.ts";

export type AclTab = "tokens" | "policies" | "roles" | "login";

const TABS: readonly (readonly [AclTab, string])[] = [["tokens", "Tokens"], ["policies", "Policies"], ["roles", "Roles"], ["login", "Log in"]];

/** `${base}${dc}/acls/${rest}`. */
export const aclHref = (base: string, dc: string, rest: string) => `${base}${encodeURIComponent(dc)}/acls/${rest}`;

function SessionLine(props: { readonly base: string; readonly session: AclSession }) {
  const { base, session } = props;
  const { dc, self } = session;
  if (session.state !== "ok" || !self) return <p class="acl-session" id="acl-session">Not logged in.</p>;
  return (
    <div class="acl-session" id="acl-session">
      <p>
        {"Using token "}<a href={aclHref(base, dc, `tokens/${self.AccessorID}`)}>{shortId(self.AccessorID)}</a>
        {`${self.Description ? ` (${self.Description})` : ""}: ${session.canWrite ? "may change ACLs" : "may not change ACLs (read only)"}.`}
      </p>
      {session.token !== undefined ? (
        <form method="post" action={aclHref(base, dc, "logout")}><button type="submit">Log out</button></form>
      ) : null}
    </div>
  );
}

/** An ACL page: the Access Controls section with its tabs and the session line. */
export function AclLayout(props: {
  readonly frame: PageFrame; readonly session: AclSession; readonly tab: AclTab; readonly title: string; readonly children?: Child;
}) {
  const { frame, session, tab, title } = props;
  return (
    <Layout {...frame} section="acls" title={title}>
      <nav class="tabs" aria-label="Access controls">
        <ul>
          {TABS.map(([id, label]) => <li><a href={aclHref(frame.base, frame.dc, id)} aria-current={id === tab ? "page" : undefined}>{label}</a></li>)}
        </ul>
      </nav>
      {session.state === "off" ? null : <SessionLine base={frame.base} session={session} />}
      {props.children}
    </Layout>
  );
}

/** The login form: the token's SecretID, and where to go back to. */
export function LoginForm(props: { readonly base: string; readonly dc: string; readonly next: string }) {
  const { base, dc, next } = props;
  return (
    <form method="post" action={aclHref(base, dc, "login")} class="acl-form">
      <label for="acl-login-token">Token SecretID</label>
      <input id="acl-login-token" type="password" name="token" required autocomplete="off" spellcheck={false} />
      <input type="hidden" name="next" value={next} />
      <button type="submit">Log in</button>
    </form>
  );
}

/** The login page, or an ACL page asking for a login: `message` says why (a refusal in words). */
export function LoginPage(props: { readonly frame: PageFrame; readonly session: AclSession; readonly next: string; readonly message?: string; readonly title?: string }) {
  const { frame, session, next, message } = props;
  return (
    <AclLayout frame={frame} session={session} tab="login" title={props.title ?? "Log in"}>
      {message ? <p role="alert" class="acl-error" id="acl-message">{message}</p> : null}
      <p>Paste the SecretID of an ACL token. It is checked with the agent and kept in a cookie that only this UI can read; every page then reads as that token.</p>
      <LoginForm base={frame.base} dc={frame.dc} next={next} />
    </AclLayout>
  );
}

/** ACLs are disabled: what that means and how to turn them on. */
export function AclOffPage(props: { readonly frame: PageFrame; readonly session: AclSession }) {
  return (
    <AclLayout frame={props.frame} session={props.session} tab="tokens" title="Access controls are off">
      <p id="acl-off">
        ACLs are disabled in {props.frame.dc}: there are no tokens, policies or roles to manage, and every request is allowed.
      </p>
      <p>To turn them on, enable ACLs in the configuration of every server and client agent and restart them:</p>
      <pre class="acl-config">{'acl {\n  enabled = true\n  default_policy = "deny"\n}'}</pre>
      <p>In a JSON configuration file (<code>-config-file</code>):</p>
      <pre class="acl-config">{'{ "acl": { "enabled": true, "default_policy": "deny" } }'}</pre>
      <p>Then create the first management token with <code>causeway acl bootstrap</code> and log in here with its SecretID.</p>
    </AclLayout>
  );
}

/** A page with one message in words (a refusal, a missing object) and, for a refusal, the login form to switch tokens. */
export function AclMessagePage(props: { readonly frame: PageFrame; readonly session: AclSession; readonly tab: AclTab; readonly title: string; readonly message: string; readonly login?: boolean; readonly next?: string }) {
  const { frame, session, tab, title, message } = props;
  return (
    <AclLayout frame={frame} session={session} tab={tab} title={title}>
      <p role="alert" class="acl-error" id="acl-message">{message}</p>
      {props.login ? (
        <section aria-labelledby="acl-switch">
          <h2 id="acl-switch">Log in with another token</h2>
          <LoginForm base={frame.base} dc={frame.dc} next={props.next ?? aclHref(frame.base, frame.dc, tab)} />
        </section>
      ) : null}
    </AclLayout>
  );
}

/** The page's own path and query, to come back to after a login. */
export const herePath = (c: Context) => {
  const u = new URL(c.req.url);
  return `${u.pathname}${u.search}`;
};

/**
 * Answers the states an ACL page cannot be shown in (ACLs off: the explanation, 200; no token: the
 * login form, 200 for a page and 403 for a write; a refused cookie: the login form saying so, 403), else runs `page` with the session.
 * A failure `page` throws is answered by `aclProblem`.
 */
export async function aclGate(
  ctx: UiContext, c: Context, tab: AclTab, page: (session: AclSession, frame: PageFrame, dc: string) => Promise<Response>,
): Promise<Response> {
  const dc = c.req.param("dc") ?? ctx.deps.datacenter;
  let session: AclSession;
  try {
    session = await aclSession(ctx, c, dc);
  } catch (err) {
    return ctx.failure(c, dc, err, "acls");
  }
  const frame = await ctx.frame(c, dc);
  if (session.state === "off") return ctx.html(c, <AclOffPage frame={frame} session={session} />);
  if (session.state === "none") {
    // A page asks for a login (200); a write attempted without one is refused (403).
    return ctx.html(c, <LoginPage frame={frame} session={session} next={c.req.method === "GET" ? herePath(c) : aclHref(frame.base, dc, tab)} title="Log in to see access controls" message="Log in with an ACL token to see this page." />, c.req.method === "GET" ? 200 : 403);
  }
  if (session.state === "refused") {
    return ctx.html(c, <LoginPage frame={frame} session={session} next={herePath(c)} message="Your saved token was not accepted (it may have been deleted or expired). Log in again." />, 403);
  }
  try {
    return await page(session, frame, dc);
  } catch (err) {
    return aclProblem(ctx, c, session, frame, tab, err);
  }
}

/** A failed read or write in words: permission 403 (with the login form), a missing object 404, else the API's status. */
export function aclProblem(ctx: UiContext, c: Context, session: AclSession, frame: PageFrame, tab: AclTab, err: unknown): Promise<Response> {
  const refusal = refusalOf(err);
  if (refusal === "denied") {
    return ctx.html(c, <AclMessagePage frame={frame} session={session} tab={tab} title="Not allowed" login next={herePath(c)}
      message={`Your token may not do this: the agent answered "${(err as Error).message}".`} />, 403);
  }
  if (refusal === "not-found" || (err as { status?: number }).status === 404) {
    return ctx.html(c, <AclMessagePage frame={frame} session={session} tab={tab} title="Not found" message={`There is no such ${tab.replace(/ies$/, "y").replace(/s$/, "")} in ${frame.dc}.`} />, 404);
  }
  return ctx.failure(c, frame.dc, err, "acls");
}
