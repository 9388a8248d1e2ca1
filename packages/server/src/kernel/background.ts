// A pass of background work that runs on a timer and on demand, never twice at once: a
// kick during a pass runs one more pass after it. Used by the integrity verifier and the
// webhook delivery worker.
export class BackgroundTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private again = false;
  private closed_ = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly onError: (err: unknown) => void,
  ) {}

  get closed(): boolean {
    return this.closed_;
  }

  /** Runs a pass every `everyMs` (the timer does not keep the process alive). */
  start(everyMs: number): void {
    this.timer = setInterval(() => this.kick(), everyMs);
    this.timer.unref();
  }

  /** Runs a pass now, or right after the current one. */
  kick(): void {
    if (this.closed_) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.pass();
        } catch (err) {
          this.onError(err);
        }
      } while (this.again && !this.closed_);
    })().finally(() => (this.running = null));
  }

  /** Stops the timer and waits for the current pass (which should check `closed` and stop early). */
  async close(): Promise<void> {
    this.closed_ = true;
    clearInterval(this.timer);
    while (this.running) await this.running;
  }
}
