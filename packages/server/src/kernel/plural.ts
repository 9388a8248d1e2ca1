// "1 entry", "2 entries": counts in messages people read.
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
