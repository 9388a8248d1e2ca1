// Two Ajv instances: bodies are validated strictly (no type coercion, every error
// reported, unknown fields kept so schemas can reject or store them), while path
// and query parameters, which arrive as strings, are coerced to their types.
//
// Every route's validators and serializers are compiled on their first use, not at start:
// compiling all of them (Ajv and fast-json-stringify, 1,073 schemas) was most of the
// service's start (docs/performance.md, "Start to ready"). A route's first request pays its own
// compilation once. test/openapi.test.ts compiles every route's schemas, so a schema that
// would not compile fails the suite rather than a first request.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler, FastifySchemaValidationError, FastifySerializerCompiler } from 'fastify';

function make(options: Options): Ajv {
  const ajv = new Ajv({ strict: false, useDefaults: true, removeAdditional: false, ...options });
  addFormats.default(ajv);
  return ajv;
}

/** What Fastify calls to validate a part of a request: an Ajv function, or its stand-in until first use. */
type Validate = ((data: unknown, context?: object) => boolean) & { errors?: FastifySchemaValidationError[] | null; schemaEnv?: unknown };

/**
 * A validator compiled on its first call. `schemaEnv` is set from the start so that Fastify passes
 * the parent context, as it does to an Ajv function (Ajv needs it to replace a coerced root value).
 */
function lazyValidator(compile: () => Validate): Validate {
  const validate: Validate = (data, context) => {
    const compiled = compile();
    const ok = context === undefined ? compiled(data) : compiled(data, context);
    validate.errors = compiled.errors;
    return ok;
  };
  validate.schemaEnv = true;
  return validate;
}

export interface Compilers {
  validator: FastifySchemaCompiler<unknown>;
  serializer: FastifySerializerCompiler<unknown>;
  /** Compiles every schema handed out so far at once (test/openapi.test.ts): throws what the first request of a route would. */
  compileAll(): number;
}

/** The validator and serializer compilers of one app, both lazy. */
export function routeCompilers(): Compilers {
  let body: Ajv | undefined;
  let params: Ajv | undefined;
  const ajvFor = (httpPart: string | undefined) =>
    httpPart === 'body' ? (body ??= make({ coerceTypes: false, allErrors: true })) : (params ??= make({ coerceTypes: 'array', allErrors: true }));
  const buildSerializer = SerializerSelector()({}, {});
  const pending: Array<() => unknown> = [];
  const validator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    let compiled: Validate | undefined;
    const compile = () => (compiled ??= ajvFor(httpPart).compile(schema as object) as Validate);
    pending.push(compile);
    return lazyValidator(compile);
  };
  const serializer: FastifySerializerCompiler<unknown> = (route) => {
    let compiled: ((data: unknown) => string) | undefined;
    const compile = () => (compiled ??= buildSerializer(route as Parameters<typeof buildSerializer>[0]) as (data: unknown) => string);
    pending.push(compile);
    return (data: unknown) => compile()(data);
  };
  return {
    validator,
    serializer,
    compileAll: () => {
      for (const compile of pending) compile();
      return pending.length;
    },
  };
}

/** A body schema compiled outside a route (the same rules as request bodies), for values the service builds from another encoding; compiled on first use. */
export function compileBodySchema<T>(schema: object): ((value: unknown) => value is T) & { errors?: Array<{ instancePath: string; message?: string }> | null } {
  let compiled: ReturnType<Ajv['compile']> | undefined;
  const check = ((value: unknown) => {
    compiled ??= make({ coerceTypes: false, allErrors: true }).compile(schema);
    const ok = compiled(value);
    check.errors = compiled.errors as typeof check.errors;
    return ok;
  }) as ((value: unknown) => value is T) & { errors?: Array<{ instancePath: string; message?: string }> | null };
  return check;
}
