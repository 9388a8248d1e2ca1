// The service's errors as the client sees them: the RFC 9457 body, and the error that carries it.

/** RFC 9457 problem body the service answers with. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: Array<{ field: string; message: string }>;
}

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.name = 'ProblemError';
  }
}
