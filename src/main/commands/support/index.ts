/** Shared pieces of the data-plane CLI commands. */
export * from "./base64.ts";
export * from "./command_group.ts";
export * from "./http_command.ts";
export * from "./text_format.ts";
