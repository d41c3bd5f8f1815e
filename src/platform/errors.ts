// The platform's error bodies: `{message, documentation_url, status}`, and for validation failures
// 422 with `errors: [{resource, field, code}]`. `documentation_url` names the server's own reference.

/** An operation as the reference shows it (a route's schema): its first tag and its operation id; hidden ones are not shown. */
export interface ReferencedOperation {
  tags?: readonly string[];
  operationId?: string;
  hide?: boolean;
}

/**
 * An error body's `documentation_url`: the server's own reference (`reference`, /docs under the
 * public URL), at the operation's anchor where the reference shows it — Swagger UI's deep link
 * `#/{tag}/{operationId}`, each part URI-encoded (operation ids hold a `/`).
 */
export function documentationUrl(reference: string, operation?: ReferencedOperation): string {
  const tag = operation?.tags?.[0];
  const id = operation?.operationId;
  if (!tag || !id || operation.hide) return reference;
  return `${reference}#/${encodeURIComponent(tag)}/${encodeURIComponent(id)}`;
}

export type ValidationCode = 'missing' | 'missing_field' | 'invalid' | 'already_exists' | 'unprocessable' | 'custom';

export interface ValidationError {
  resource: string;
  field: string;
  code: ValidationCode;
  message?: string;
  value?: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly errors?: ValidationError[];
  readonly headers?: Record<string, string>;
  readonly extra?: Record<string, unknown>;

  constructor(
    status: number,
    message: string,
    options: { errors?: ValidationError[]; headers?: Record<string, string>; extra?: Record<string, unknown> } = {},
  ) {
    super(message);
    this.status = status;
    this.errors = options.errors;
    this.headers = options.headers;
    this.extra = options.extra;
  }

  /** The body, its `documentation_url` given (`documentationUrl`). */
  body(documentation: string): Record<string, unknown> {
    return {
      message: this.message,
      ...(this.errors ? { errors: this.errors } : {}),
      ...this.extra,
      documentation_url: documentation,
      status: String(this.status),
    };
  }
}

export const notFound = (message = 'Not Found') => new ApiError(404, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const conflict = (message: string) => new ApiError(409, message);
export const badRequest = (message: string) => new ApiError(400, message);
export const requiresAuthentication = () => new ApiError(401, 'Requires authentication');
export const badCredentials = () => new ApiError(401, 'Bad credentials');

/** Any credential of a suspended user, as the platform answers it (docs/permissions.md). */
export const accountSuspended = () => new ApiError(403, 'Sorry. Your account was suspended.');

/** An installation token, or minting one, while its installation is suspended (docs/permissions.md). */
export const installationSuspended = () => new ApiError(403, 'This installation has been suspended');

/** The database is unavailable for now (down, restarting, the pool exhausted, the disk full): the client may retry. */
export const serviceUnavailable = () =>
  new ApiError(503, 'Service Unavailable: the database cannot be reached right now; try again shortly.', { headers: { 'retry-after': '5' } });

export function validationFailed(errors: ValidationError[], message = 'Validation Failed'): ApiError {
  return new ApiError(422, message, { errors });
}

/** One invalid field: the common case of a 422. */
export function invalidField(resource: string, field: string, message?: string, code: ValidationCode = message ? 'custom' : 'invalid'): ApiError {
  return validationFailed([{ resource, field, code, ...(message ? { message } : {}) }]);
}

/** A unique-constraint violation from either database. */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; errcode?: string; message?: string };
  return e?.code === '23505' || /UNIQUE constraint failed/.test(e?.message ?? '');
}

/** Runs an insert; a unique-constraint violation becomes the platform's 422 `already_exists`. */
export async function insertUnique<T>(resource: string, field: string, insert: () => Promise<T>): Promise<T> {
  try {
    return await insert();
  } catch (error) {
    if (isUniqueViolation(error)) throw validationFailed([{ resource, field, code: 'already_exists' }]);
    throw error;
  }
}
