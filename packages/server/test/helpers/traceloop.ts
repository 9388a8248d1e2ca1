// What the Traceloop-based tests (otlp-traceloop.test.ts, otlp-llamaindex.test.ts) share: the
// Traceloop SDK takes one exporter, once, so each run switches where spans go; and its withTool /
// withAgent never end the span of a function whose promise rejects (0.27), so a failure is marked
// on the active span and returned instead of thrown.
import { SpanStatusCode, trace } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace';

/** Sends each span to the exporter of the run under way. */
export class Switch implements SpanExporter {
  to: SpanExporter | null = null;
  export(spans: Parameters<SpanExporter['export']>[0], done: Parameters<SpanExporter['export']>[1]): void {
    if (this.to) this.to.export(spans, done);
    else done({ code: 0 });
  }
  shutdown = async () => undefined;
  forceFlush = async () => this.to?.forceFlush?.();
}

/** Marks the active span failed and says so, without throwing. */
export function failHere(err: Error): { error: string } {
  const span = trace.getActiveSpan();
  span?.recordException(err);
  span?.setStatus({ code: SpanStatusCode.ERROR, message: err.message });
  return { error: err.message };
}
