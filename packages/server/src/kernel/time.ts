/** Fixed-width ISO 8601 UTC with milliseconds: the one timestamp format stored and returned. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
