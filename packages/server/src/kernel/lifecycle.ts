// What the composition root (services.ts) starts and stops: each part registers its own start and
// close as it is built, in dependency order, and they are closed in the reverse order, so nothing
// closes before what still uses it (the appends finish before signing stops, signing before the
// keyring). Anchor: fastify/demo's plugins with their `dependencies`, closed in reverse.
export interface Part {
  /** For a failed close's message. */
  name: string;
  /** Starts background work (timers, workers); run once the app is ready. */
  start?: () => void;
  close?: () => void | Promise<void>;
}

export class Lifecycle {
  private readonly parts: Part[] = [];

  /** Registers a part: its start runs after those registered before it, its close before theirs. */
  add(part: Part): void {
    this.parts.push(part);
  }

  /** Starts every part, in the order they were registered. */
  start(): void {
    for (const p of this.parts) p.start?.();
  }

  /** Closes every part, newest first; a close that fails does not keep the others from closing (the first failure is thrown after). */
  async close(): Promise<void> {
    let failure: unknown;
    for (const p of [...this.parts].reverse()) {
      try {
        await p.close?.();
      } catch (err) {
        failure ??= new Error(`closing ${p.name} failed`, { cause: err });
      }
    }
    if (failure !== undefined) throw failure;
  }
}
