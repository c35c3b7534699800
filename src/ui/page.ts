/**
 * What a UI page module gets and gives. Each page module (services, nodes, kv, ...) adds its routes to
 * the UI's Hono app through a UiContext, may name live topics (server-sent-event streams that re-render
 * one of its fragments), and may add CSS and client script to the one stylesheet and client module.
 * app.tsx mounts the modules listed in pages.ts; nothing else knows a page's URL.
 */
import type { Context, Hono } from "hono";
import type { Clock } from "../platform/index.ts";
import type { PageFrame, Section } from "./layout.tsx";
import type { LiveTopic } from "./live.ts";

/** The login cookie (set by the ACL login page): every page reads as its token. */
export const TOKEN_COOKIE = "causeway-token";

export interface UiDeps {
  /** This agent's datacenter: where /ui/ leads. */
  readonly datacenter: string;
  /** Base path with leading and trailing slash ("/ui/"). */
  readonly contentPath: string;
  /** Every known datacenter, nearest first. */
  datacenters(): readonly string[] | Promise<readonly string[]>;
  /**
   * One call to this agent's own `/v1` HTTP API, in process: the same handlers, ACL checks, blocking
   * queries and answers as over the network. `token` (the UI's login cookie) goes as X-Consul-Token;
   * without one the agent's default token applies, as for any API client.
   */
  api(call: ApiCall): Promise<Response>;
  /** Times the live streams' heartbeats and push gaps. */
  readonly clock: Clock;
}

export interface ApiCall {
  readonly method?: string;
  /** "/v1/..." with its query string. */
  readonly path: string;
  readonly token?: string | undefined;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

export interface Indexed<T> {
  readonly value: T;
  readonly index: number;
}

export interface BlockingWait {
  readonly minIndex: number;
  readonly maxWaitMs: number;
  readonly signal: AbortSignal;
}

/** An answer of the API that was not 2xx: its status and Consul's error text. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** A live topic's query parameters (the page's own query string, as the page rendered it). */
export type QueryGetter = (name: string) => string | undefined;

/** What a page module's routes work with. */
export interface UiContext {
  readonly deps: UiDeps;
  /** The UI's base path with a trailing slash ("/ui/"): every link starts with it. */
  readonly base: string;
  /** The login token (the `causeway-token` cookie), or undefined for the agent's default. */
  token(c: Context): string | undefined;
  /** The datacenters for the switcher, `dc` included even when unknown. */
  switcher(dc: string): Promise<string[]>;
  /** What every page's <Layout> needs besides its section and title: base, datacenters, the reader's preferences. */
  frame(c: Context, dc: string): Promise<PageFrame>;
  /** The options of a cookie the UI sets: path = the base, HttpOnly, SameSite=Strict, Secure over TLS; `maxAgeS` or a session cookie. */
  cookie(c: Context, maxAgeS?: number): { readonly path: string; readonly sameSite: "Strict"; readonly httpOnly: true; readonly secure: boolean; readonly maxAge?: number };
  /** Answers a rendered page (a `<Layout>` tree) as HTML, never cached. */
  html(c: Context, page: unknown, status?: number): Promise<Response>;
  /** A failed read or write as a page in words (of `section`, services by default): unknown datacenter 404, permission 403, else the API's status or 500. */
  failure(c: Context, dc: string, err: unknown, section?: Section): Promise<Response>;
  /**
   * GET `path` (a /v1 path with its query) of `dc` as JSON, with the answer's X-Consul-Index; with `wait`,
   * a blocking read past `wait.minIndex`. A non-2xx answer throws ApiError.
   */
  read<T>(path: string, dc: string, token: string | undefined, wait?: BlockingWait): Promise<Indexed<T>>;
  /** Any call of the API as `token`; a non-2xx answer throws ApiError. Answers the body as text. */
  call(call: ApiCall & { readonly dc?: string }): Promise<{ readonly status: number; readonly text: string; readonly index: number }>;
}

export interface UiPageModule {
  /** Adds the module's routes (GET pages, POST forms) under ctx.base. */
  routes(app: Hono, ctx: UiContext): void;
  /** Its live topics by name: `?topic=<name>` on the events stream, with the page's query. */
  readonly topics?: Readonly<Record<string, (ctx: UiContext, dc: string, token: string | undefined, query: QueryGetter) => LiveTopic<unknown> | undefined>>;
  /** CSS appended to the one stylesheet. */
  readonly css?: string;
  /** Script appended to the one client module (runs once per page, inside its own block). */
  readonly client?: string;
}
