// The schema compilers: Ajv for validation (queries coerced, bodies not), fast-json-stringify for
// responses; at start, or on a route's first use (the testing helper).
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import fastJson from 'fast-json-stringify';
import type { FastifyInstance } from 'fastify';

/** Query strings are coerced (`per_page=5` is a number); bodies are not (`"5"` is not an integer). */
function validatorCompilers(onFirstUse: boolean) {
  const common = { allErrors: false, strict: false, useDefaults: true, removeAdditional: false } as const;
  const query = new Ajv.default({ ...common, coerceTypes: 'array' });
  const body = new Ajv.default({ ...common, coerceTypes: false });
  addFormats.default(query);
  addFormats.default(body);
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    const compile = () => (httpPart === 'body' ? body : query).compile(schema);
    if (!onFirstUse) return compile();
    let compiled: ValidateFunction | undefined;
    // Fastify reads a failed validation's errors from the function it was given.
    function validate(data: unknown): boolean {
      compiled ??= compile();
      const valid = compiled(data) as boolean;
      validate.errors = compiled.errors;
      return valid;
    }
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  };
}

/** Response schemas compiled to serializers (fast-json-stringify, as Fastify's default does) when a route first answers. */
function serializerOnFirstUse({ schema }: { schema: object }) {
  let serialize: ((data: unknown) => string) | undefined;
  return (data: unknown) => (serialize ??= fastJson(schema))(data);
}

/**
 * `compileSchemas: 'on first use'` (the testing helper): a route's validators and serializers are
 * compiled when a request first needs them, not at start, where compiling all of them took most of
 * a start (docs/performance.md, "The helper's start"). A server that answers many routes compiles
 * them at start (the default), so no client waits for a compilation.
 */
export interface ConventionOptions {
  compileSchemas?: 'at start' | 'on first use';
}

export function installCompilers(app: FastifyInstance, options: ConventionOptions = {}): void {
  const onFirstUse = options.compileSchemas === 'on first use';
  app.setValidatorCompiler(validatorCompilers(onFirstUse));
  if (onFirstUse) app.setSerializerCompiler(serializerOnFirstUse);
}
