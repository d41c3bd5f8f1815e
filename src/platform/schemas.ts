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
