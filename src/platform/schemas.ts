// Response schemas shared by every route: the platform's error bodies.
import { Type } from 'typebox';

export const ErrorBody = Type.Object({
  message: Type.String(),
  documentation_url: Type.String(),
  status: Type.String(),
});

export const ValidationErrorBody = Type.Object({
  message: Type.String(),
  errors: Type.Optional(Type.Array(Type.Object({
    resource: Type.String(),
    field: Type.String(),
    code: Type.String(),
    message: Type.Optional(Type.String()),
  }))),
  documentation_url: Type.String(),
  status: Type.String(),
});

/** Whether an integer can be a row id at all (ids are int4 on both engines; PostgreSQL refuses larger values). */
export function isRowId(id: number): boolean {
  return Number.isInteger(id) && id >= 1 && id <= 2 ** 31 - 1;
}
