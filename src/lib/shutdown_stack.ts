/**
 * The stop steps of something started in parts: each part pushes its stop step once it has started;
 * `stopAll` runs them in reverse order of start, once each, awaiting each one. A step that throws is
 * reported to `onError` and does not keep the steps after it from running.
 */
export interface ShutdownStack {
  push(step: () => unknown): void;
  /** Runs and forgets every pushed step, last pushed first. */
  stopAll(): Promise<void>;
}

export function shutdownStack(onError: (err: unknown) => void): ShutdownStack {
  const steps: (() => unknown)[] = [];
  return {
    push: (step) => void steps.push(step),
    async stopAll() {
      for (const step of steps.splice(0).reverse()) {
        try {
          await step();
        } catch (err) {
          onError(err);
        }
      }
    },
  };
}
