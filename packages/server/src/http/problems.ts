// The one error shape: RFC 9457 problem+json with a stable `code`.
// Routes throw ApiError; the error handler turns everything else (validation,
// body parsing, unknown failures) into the same shape. Never a stack trace.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { CoreError } from '@audit-ledger/core';
import { DomainError, type FieldError } from '../kernel/domain-error.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Every code the API can answer with, and its fixed title. Documented in the README. */
export const PROBLEM_TITLES = {
  validation_failed: 'Request validation failed',
  malformed_json: 'Malformed JSON body',
  invalid_text: 'Body is not valid Unicode text',
  duplicate_key: 'Duplicate key in a JSON object',
  unrepresentable_number: 'Number cannot be stored exactly',
  malformed_otlp: 'Malformed OTLP request',
  payload_too_large: 'Request body too large',
  unsupported_media_type: 'Unsupported content type',
  not_found: 'Not found',
  missing_credential: 'Credential required',
  invalid_credential: 'Invalid credential',
  invalid_login: 'Invalid email or password',
  forbidden: 'Forbidden',
  password_change_required: 'Set your own password first',
  csrf_failed: 'Missing or wrong CSRF token',
  last_admin: 'The company would have no active admin',
  email_taken: 'A user with this email already exists',
  company_name_ambiguous: 'The company name matches several companies',
  active_key_exists: 'An active API key already exists',
  batch_too_large: 'Too many events in one batch',
  idempotency_key_reused: 'Idempotency key already used for a different event',
  invalid_cursor: 'Invalid pagination cursor',
  tree_size_out_of_range: 'Tree size out of range',
  not_yet_checkpointed: 'Not yet covered by a checkpoint',
  verification_running: 'A verification is already running',
  rotation_conflict: 'Another key rotation came first',
  rotation_target: 'The key to rotate to cannot be used',
  agent_key_exists: 'The agent key is registered already',
  agent_key_ended: 'The agent key was revoked or replaced already',
  agent_signature_invalid: 'An agent signature does not hold',
  search_index_off: 'No index of the words inside events',
  search_too_slow: 'The search ran past its time budget',
  ledger_behind_checkpoint: 'The ledger is behind a checkpoint already published',
  under_legal_hold: 'Entries are under a legal hold',
  not_erasable: 'Entries cannot be erased',
  hold_released: 'The legal hold was already released',
  self_approval: 'Nobody may approve their own request',
  already_approved: 'You already approved this request',
  not_in_team: 'The request is assigned to a team you are not in',
  approval_not_pending: 'The approval request is already decided',
  approval_expired: 'The approval request expired',
  approval_changed: 'The approval changed meanwhile',
  approval_not_active: 'The standing approval is not active',
  not_a_request: 'A standing approval is not decided',
  nothing_detected: 'The root cause detected nothing',
  incident_closed: 'The incident is closed',
  incident_status_unchanged: 'The incident already has this status',
  rate_limited: 'Rate limit exceeded',
  too_many_login_attempts: 'Too many failed login attempts',
  integrity_failure: 'The stored ledger is damaged',
  service_unavailable: 'Service unavailable',
  internal_error: 'Internal server error',
} as const;

export type ProblemCode = keyof typeof PROBLEM_TITLES;

export type { FieldError } from '../kernel/domain-error.js';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  instance?: string;
  request_id?: string;
  errors?: FieldError[];
  /** Problem-specific members (RFC 9457 §3.2), each declared in ProblemSchema. */
  hold_id?: string;
  case_reference?: string | null;
  log_ids?: string[];
}

/** Problem-specific members a problem may carry beside the standard ones. */
export type ProblemExtensions = Pick<ProblemBody, 'hold_id' | 'case_reference' | 'log_ids'>;

/** The `code` member's description: how http/openapi.ts finds the problem responses in the generated document. */
export const PROBLEM_CODE_DESCRIPTION = 'Stable machine-readable code';

export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI identifying the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: PROBLEM_CODE_DESCRIPTION, enum: Object.keys(PROBLEM_TITLES) }),
    instance: Type.Optional(Type.String()),
    request_id: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'Every offending field, for validation problems',
      }),
    ),
    hold_id: Type.Optional(Type.String({ description: 'under_legal_hold: the hold that covers the entries' })),
    case_reference: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "under_legal_hold: the hold's case reference" })),
    log_ids: Type.Optional(Type.Array(Type.String(), { description: 'under_legal_hold, not_erasable, not_found (erasures): the entries concerned (at most 100)' })),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ProblemCode,
    detail: string,
    readonly extra: { errors?: FieldError[]; headers?: Record<string, string>; extensions?: ProblemExtensions } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

export function problemType(code: ProblemCode): string {
  return `urn:audit-ledger:problem:${code}`;
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: ProblemCode,
  detail: string,
  errors?: FieldError[],
  extensions?: ProblemExtensions,
): FastifyReply {
  const body: ProblemBody = {
    type: problemType(code),
    title: PROBLEM_TITLES[code],
    status,
    detail,
    code,
    instance: request.url.split('?')[0],
    request_id: request.id,
  };
  if (errors) body.errors = errors;
  if (extensions) Object.assign(body, extensions);
  // A string payload is sent as-is, bypassing any per-route response serializer.
  return reply.code(status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

/**
 * Maps Ajv errors (Fastify's `error.validation`) to JSON-Pointer field errors. For a
 * nullable field (`X or null`) Ajv reports every branch of the union; keep the reason
 * that matters and drop "must be null" / "must match a schema in anyOf".
 */
function fieldErrors(error: FastifyError): FieldError[] {
  const part = error.validationContext ?? 'body';
  const all = error.validation ?? [];
  const unionNoise = (v: (typeof all)[number]) =>
    v.keyword === 'anyOf' || (v.keyword === 'type' && (v.params as { type?: unknown }).type === 'null');
  const specific = new Set(all.filter((v) => !unionNoise(v)).map((v) => v.instancePath));
  const errors = all.filter((v) => !(unionNoise(v) && specific.has(v.instancePath)));
  return errors.map((v) => {
    const params = v.params as Record<string, unknown>;
    let pointer = v.instancePath;
    let message = v.message ?? 'is invalid';
    if (typeof params.missingProperty === 'string') {
      pointer += `/${params.missingProperty}`;
      message = 'is required';
    } else if (typeof params.additionalProperty === 'string') {
      pointer += `/${params.additionalProperty}`;
      message = 'is not a known field';
    }
    return { field: `/${part}${pointer}`, message };
  });
}

export interface ProblemHandlerDeps {
  /** Failures that mean a dependency is away (answered 503 with Retry-After, not 500). */
  unavailable: (err: unknown) => boolean;
  /** Told about each such failure (logs once per outage). */
  onUnavailable: (err: unknown) => void;
  retryAfterSeconds: number;
  /** Maps a domain error that reached the handler to its problem (http/domain-problems.ts). */
  domainProblem: (err: DomainError) => ApiError | undefined;
}

export function registerProblemHandlers(app: FastifyInstance, deps: ProblemHandlerDeps): void {
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, 404, 'not_found', `No route for ${request.method} ${request.url.split('?')[0]}`),
  );

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = error instanceof ApiError ? error : error instanceof DomainError ? deps.domainProblem(error) : undefined;
    if (problem) {
      for (const [k, v] of Object.entries(problem.extra.headers ?? {})) reply.header(k, v);
      return sendProblem(request, reply, problem.status, problem.code, problem.message, problem.extra.errors, problem.extra.extensions);
    }
    if (error.validation) {
      const errors = fieldErrors(error);
      const summary = errors.map((e) => `${e.field} ${e.message}`).join('; ');
      return sendProblem(request, reply, 400, 'validation_failed', summary, errors);
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(request, reply, 413, 'payload_too_large', `The body exceeds the limit of ${request.routeOptions.bodyLimit} bytes`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(request, reply, 415, 'unsupported_media_type', `Content-Type ${request.headers['content-type'] ?? '(none)'} is not supported; send ${(request.routeOptions.schema?.consumes as string[] | undefined)?.join(' or ') ?? 'application/json'}`);
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendProblem(request, reply, 400, 'malformed_json', 'The body is shorter or longer than its Content-Length');
    }
    // JSON bodies are parsed in app.ts, which throws ApiError(400, 'malformed_json') itself.
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      // A Fastify client error we have no specific code for: keep its status, with the code of that status.
      const code = error.statusCode === 404 ? 'not_found' : error.statusCode === 403 ? 'forbidden' : error.statusCode === 413 ? 'payload_too_large' : error.statusCode === 415 ? 'unsupported_media_type' : 'validation_failed';
      return sendProblem(request, reply, error.statusCode, code, error.message);
    }
    // The stored tree lacks a hash an answer needs: an entry or tree row was removed from the
    // database. Nothing is answered from a damaged tree; the full verification names the damage.
    if (error instanceof CoreError && error.code === 'missing_tree_hash') {
      request.log.warn({ err: error }, 'the stored Merkle tree is damaged');
      return sendProblem(request, reply, 503, 'integrity_failure', `The stored ledger is damaged: ${error.message} (an entry or a tree row was removed from the database). Nothing was changed. POST /api/v1/integrity/verify names every missing entry; an operator restores them from a backup.`);
    }
    if (deps.unavailable(error)) {
      deps.onUnavailable(error);
      reply.header('Retry-After', String(deps.retryAfterSeconds));
      return sendProblem(request, reply, 503, 'service_unavailable', `The database is unavailable; nothing was changed; retry after ${deps.retryAfterSeconds} s`);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, 500, 'internal_error', `An internal error occurred; quote request id ${request.id} when reporting it`);
  });
}

/** For route schemas: the problem responses a route can give, so they appear in OpenAPI. */
export function problemResponses(...statuses: number[]): Record<number, typeof ProblemSchema> {
  return Object.fromEntries(statuses.map((s) => [s, ProblemSchema]));
}
