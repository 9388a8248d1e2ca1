// The timeline: every event of the session in event-time order, then seq.
import type { JsonObject } from '@audit-ledger/core';
import { eventTimeMs, type Trace } from './trace.js';

export interface TimelineItem {
  log_id: string;
  seq: number;
  event_type: string;
  /** The event's time: the client's timestamp when it sent one, else created_at; ISO 8601 UTC. */
  timestamp: string;
  timestamp_source: 'client' | 'server';
  created_at: string;
  source: string | null;
  data: JsonObject;
  /** The content was erased: data is {}. */
  erased: boolean;
  integrity: 'valid' | 'invalid';
}

export function timeline(trace: Trace): TimelineItem[] {
  return trace.events.map((e) => {
    const client = e.timestamp !== null && !Number.isNaN(Date.parse(e.timestamp));
    return {
      log_id: e.log_id,
      seq: e.seq,
      event_type: e.event_type,
      timestamp: new Date(eventTimeMs(e)).toISOString(),
      timestamp_source: client ? 'client' : 'server',
      created_at: e.created_at,
      source: e.source,
      data: e.erased ? {} : e.data,
      erased: e.erased,
      integrity: e.integrity,
    };
  });
}
