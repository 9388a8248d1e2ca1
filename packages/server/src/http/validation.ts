// Two Ajv instances: bodies are validated strictly (no type coercion, every error
// reported, unknown fields kept so schemas can reject or store them), while path
// and query parameters, which arrive as strings, are coerced to their types.
import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function make(options: Options): Ajv {
  const ajv = new Ajv({ strict: false, useDefaults: true, removeAdditional: false, ...options });
  addFormats.default(ajv);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const body = make({ coerceTypes: false, allErrors: true });
  const params = make({ coerceTypes: 'array', allErrors: true });
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : params).compile(schema as object);
}

/** A body schema compiled outside a route (the same rules as request bodies), for values the service builds from another encoding. */
export function compileBodySchema<T>(schema: object): ((value: unknown) => value is T) & { errors?: Array<{ instancePath: string; message?: string }> | null } {
  return make({ coerceTypes: false, allErrors: true }).compile<T>(schema);
}
