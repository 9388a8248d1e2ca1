// How a command ends: an Exit with its code (0 done, 1 the command failed, 2 usage or
// configuration error; see also verify-bundle), thrown to cli.ts's main, which exits with it.
export class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** A repeatable option's values, in order. */
export const collectValues = (value: string, previous: string[]): string[] => [...previous, value];
