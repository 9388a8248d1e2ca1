// How busy ingestion keeps this process, from the appender's commits: whether it ingests at all
// (a full verification then leaves a core to it), and whether it needs the machine (log streams
// then wait): the writer committing over half the time, or the request thread busy over 90% of
// it while appends come in.
import { performance } from 'node:perf_hooks';

export class IngestionLoad {
  private lastCommitAt = 0;
  private commitSeconds = 0;
  private windowFrom: number;
  private utilization = performance.eventLoopUtilization();

  constructor(private readonly clock: () => number) {
    this.windowFrom = clock();
  }

  /** The appender committed a group that took `seconds`. */
  committed(seconds: number): void {
    this.lastCommitAt = this.clock();
    this.commitSeconds += seconds;
  }

  /** Whether this process committed an append in the last second. */
  ingesting(): boolean {
    return this.clock() - this.lastCommitAt < 1000;
  }

  /** Whether ingestion needed the machine since the last time this was asked. */
  saturated(): boolean {
    const now = this.clock();
    const writerBusy = now > this.windowFrom && this.commitSeconds / ((now - this.windowFrom) / 1000) > 0.5;
    const elu = performance.eventLoopUtilization();
    const threadBusy = performance.eventLoopUtilization(elu, this.utilization).utilization > 0.9 && now - this.lastCommitAt < 1000;
    this.commitSeconds = 0;
    this.windowFrom = now;
    this.utilization = elu;
    return writerBusy || threadBusy;
  }
}
