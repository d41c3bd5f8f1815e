// The calling app or installation of a route whose access rule admits only that credential kind
// (an app JWT, an installation token): the rule has refused everything else, so the narrowing here
// only answers the type system (and a 404 should a route be declared wider by mistake).
import type { FastifyRequest } from 'fastify';
import { notFound } from '../../platform/errors.ts';
import type { AppPrincipal, InstallationPrincipal } from './principal.ts';

/** The app behind the JWT or Basic credentials; with `clientId`, it must be the app the path names. */
export function callingApp(request: FastifyRequest, clientId?: string): AppPrincipal['app'] {
  const principal = request.principal;
  if (principal.type !== 'app' || (clientId !== undefined && principal.app.client_id !== clientId)) throw notFound();
  return principal.app;
}

/** The installation behind an installation token. */
export function callingInstallation(request: FastifyRequest): InstallationPrincipal {
  const principal = request.principal;
  if (principal.type !== 'installation') throw notFound();
  return principal;
}
