// deploy/compose.yaml and deploy/kubernetes.yaml, which no machine here can run (no Docker engine,
// no cluster, no image registry): each read as its tool reads it, and held to what codehost needs.
// The environment each gives codehost is a production configuration that codehost accepts (read
// and checked by src/config.ts as `serve` does, the placeholders filled with real secrets); the
// image is the Containerfile's, its user and read-only root filesystem as the image has them;
// readiness on /readyz, liveness on /healthz; the migrations applied once, before the processes
// start; a stop given longer than codehost's own 30 s.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig, refusals } from '../../src/config.ts';

const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
// What `codehost secret-key generate` and `admin-token generate` make: random, base64url.
const SECRET_KEY = randomBytes(32).toString('base64url');
const ADMIN_TOKEN = `chadm_${randomBytes(30).toString('base64url')}`;
const METRICS_TOKEN = `chadm_${randomBytes(30).toString('base64url')}`;

/** What codehost makes of an environment: the refusals `serve` would stop with (none is the goal), and the mode. */
function accepted(env: Record<string, string>): { mode: string; refused: string[] } {
  const config = loadConfig(env);
  return { mode: config.mode, refused: refusals(config, env) };
}

test('deploy/compose.yaml: PostgreSQL, a migrate run that ends before codehost starts, codehost in production mode from the Containerfile, read-only with /data its volume', () => {
  const compose = parse(readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8'), { merge: true }) as any;
  const { postgres, migrate, codehost } = compose.services;
  assert.ok(postgres.healthcheck, 'PostgreSQL says when it is ready');
  assert.equal(migrate.build.dockerfile, 'Containerfile');
  assert.ok(existsSync(join(ROOT, 'deploy', migrate.build.context, 'Containerfile')), 'the build context is the checkout');
  assert.equal(codehost.image, migrate.image, 'codehost runs the image migrate builds');
  assert.deepEqual(migrate.command, ['migrate']);
  assert.deepEqual(codehost.command, ['serve']);
  assert.equal(migrate.depends_on.postgres.condition, 'service_healthy');
  assert.equal(codehost.depends_on.migrate.condition, 'service_completed_successfully');
  assert.equal(codehost.read_only, true);
  assert.ok(codehost.volumes.some((volume: string) => volume.endsWith(':/data')));
  assert.equal(codehost.stop_signal, 'SIGTERM');
  assert.ok(Number.parseInt(codehost.stop_grace_period, 10) > 30, 'longer than codehost\'s own 30 s stop');
  // ${NAME:?...} and ${NAME:-default} as the shell gives them.
  const given: Record<string, string> = { POSTGRES_PASSWORD: 'pw', CODEHOST_SECRET_KEY: SECRET_KEY, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN, CODEHOST_METRICS_TOKEN: METRICS_TOKEN };
  const env = Object.fromEntries(Object.entries(codehost.environment as Record<string, string>).map(([name, value]) => [
    name, String(value).replace(/\$\{(\w+)(?::[?-]([^}]*))?\}/g, (_, variable: string, fallback?: string) => given[variable] ?? fallback ?? ''),
  ]));
  assert.equal(env.DATABASE_URL, 'postgres://codehost:pw@postgres:5432/codehost');
  assert.deepEqual(accepted(env), { mode: 'production', refused: [] });
});

test('deploy/kubernetes.yaml: a Secret and a ConfigMap that make a production configuration, a migrate Job, three processes with /readyz and /healthz probes as the image runs them', () => {
  const documents = parseAllDocuments(readFileSync(join(ROOT, 'deploy/kubernetes.yaml'), 'utf8')).map((document) => document.toJS() as any);
  const of = (kind: string) => {
    const found = documents.filter((document) => document.kind === kind);
    assert.equal(found.length, 1, `one ${kind}`);
    return found[0];
  };
  const secret = of('Secret');
  const configMap = of('ConfigMap');
  const job = of('Job');
  const deployment = of('Deployment');
  const service = of('Service');
  const claim = of('PersistentVolumeClaim');

  const env = { ...configMap.data, ...secret.stringData, CODEHOST_SECRET_KEY: SECRET_KEY, CODEHOST_ADMIN_TOKEN: ADMIN_TOKEN, CODEHOST_METRICS_TOKEN: METRICS_TOKEN };
  assert.ok(secret.stringData.DATABASE_URL.startsWith('postgres://'));
  assert.deepEqual(Object.keys(secret.stringData).sort(), ['CODEHOST_ADMIN_TOKEN', 'CODEHOST_METRICS_TOKEN', 'CODEHOST_SECRET_KEY', 'DATABASE_URL'], 'the secrets are the Secret\'s, the rest the ConfigMap\'s');
  assert.deepEqual(accepted(env), { mode: 'production', refused: [] });

  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;
  const [migrate] = job.spec.template.spec.containers;
  for (const [what, spec, one] of [['the Deployment', pod, container], ['the Job', job.spec.template.spec, migrate]] as const) {
    assert.deepEqual(one.envFrom, [{ configMapRef: { name: configMap.metadata.name } }, { secretRef: { name: secret.metadata.name } }], what);
    assert.equal(spec.securityContext.runAsUser, 10001, `${what}: the image's user`);
    assert.equal(spec.securityContext.runAsNonRoot, true, what);
    assert.equal(one.securityContext.readOnlyRootFilesystem, true, what);
    assert.equal(one.securityContext.allowPrivilegeEscalation, false, what);
  }
  assert.equal(migrate.image, container.image, 'the Job migrates with the image the processes run');
  assert.deepEqual(migrate.args, ['migrate']);
  assert.deepEqual(container.args, ['serve']);
  assert.equal(job.spec.template.spec.restartPolicy, 'Never');

  assert.equal(deployment.spec.replicas, 3);
  assert.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0, 'a rolling update keeps every process serving');
  assert.ok(pod.terminationGracePeriodSeconds > 30, 'longer than codehost\'s own 30 s stop');
  assert.equal(container.ports[0].containerPort, Number(configMap.data.CODEHOST_PORT));
  assert.equal(container.readinessProbe.httpGet.path, '/readyz');
  assert.equal(container.livenessProbe.httpGet.path, '/healthz');
  assert.deepEqual(container.volumeMounts.map((mount: { mountPath: string }) => mount.mountPath).sort(), ['/data', '/tmp']);
  assert.equal(pod.volumes.find((volume: { name: string }) => volume.name === 'data').persistentVolumeClaim.claimName, claim.metadata.name);
  assert.deepEqual(claim.spec.accessModes, ['ReadWriteMany'], 'every process sees the same git data and archives');
  assert.deepEqual(service.spec.selector, deployment.spec.template.metadata.labels);
});
