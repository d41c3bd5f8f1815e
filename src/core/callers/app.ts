// The calling app or installation of a route whose access rule admits only that credential kind
// (an app JWT, an installation token): the rule has refused everything else, so the narrowing here
// only answers the type system (and a 404 should a route be declared wider by mistake).
import type { FastifyRequest } from 'fastify';
import { notFound } from '../../platform/errors.ts';
import type { AppRow, InstallationPrincipal } from './principal.ts';

/** The app behind the JWT. */
export function callingApp(request: FastifyRequest): AppRow {
  const principal = request.principal;
  if (principal.type !== 'app') throw notFound();
  return principal.app;
}

/** The installation behind an installation token. */
export function callingInstallation(request: FastifyRequest): InstallationPrincipal {
  const principal = request.principal;
  if (principal.type !== 'installation') throw notFound();
  return principal;
}
