/** The shape every CLI command has. Commands write through `io` so tests can capture output. */
export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

export interface Command {
  readonly name: string;
  /** One line for the command list. */
  readonly synopsis: string;
  /** Runs the command and resolves to the process exit code. */
  run(argv: readonly string[], io: CommandIo): Promise<number>;
}
