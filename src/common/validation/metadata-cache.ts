import { getMetadataStorage, MetadataStorage } from 'class-validator';

type Metadatas = ReturnType<MetadataStorage['getTargetValidationMetadatas']>;
type Grouped = ReturnType<MetadataStorage['groupByPropertyName']>;

/** Marks a storage already wrapped; a registry-wide symbol, so a second copy of this module (jest.resetModules) sees it too. */
const WRAPPED = Symbol.for('rhythmc:class-validator-metadata-cache');

/**
 * Keeps class-validator's answer to "which rules apply to this class" instead of working it out at
 * every validate(). Unpatched, `getTargetValidationMetadatas` filters the class's own rules and
 * tests every registered class for inheritance on each call (typestack/class-validator#2686), and
 * `groupByPropertyName` regroups the result: about 3 % of the service's CPU samples on an upload,
 * a nested DTO paying it once per level (docs/benchmarks-archive.md "Upload ÷ bare on a fast disk").
 *
 * The rules of a class are registered when its module loads (decorators), before any instance can
 * be validated, and never change afterwards; a rule added later (registerDecorator or a schema at
 * run time) clears everything kept. Results are kept per class and per argument tuple (schema,
 * always, strictGroups, groups), so grouped validation stays exact. Callers only read the arrays
 * and objects returned (ValidationExecutor), so the same ones are handed out again.
 *
 * Idempotent: the storage is global to the process, and tests start many apps in one.
 */
export function cacheValidationMetadata(storage: MetadataStorage = getMetadataStorage()): void {
  const marked = storage as MetadataStorage & { [WRAPPED]?: true };
  if (marked[WRAPPED]) return;
  marked[WRAPPED] = true;
  const resolve = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const addMetadata = storage.addValidationMetadata.bind(storage);
  const addSchema = storage.addValidationSchema.bind(storage);
  let byTarget = new WeakMap<object, Map<string, Metadatas>>();
  let groupedOf = new WeakMap<Metadatas, Grouped>();

  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups, ...more: unknown[]) => {
    // Not a class (a hostile nested `constructor`), or arguments this wrapper does not know: the library's own answer.
    if (typeof target !== 'function' || more.length > 0)
      return (resolve as (...args: unknown[]) => Metadatas)(target, schema, always, strictGroups, groups, ...more);
    let answers = byTarget.get(target);
    if (!answers) byTarget.set(target, (answers = new Map<string, Metadatas>()));
    const key = JSON.stringify([schema ?? null, always, strictGroups, groups ?? null]);
    let metadatas = answers.get(key);
    if (!metadatas) answers.set(key, (metadatas = resolve(target, schema, always, strictGroups, groups)));
    return metadatas;
  };
  storage.groupByPropertyName = (metadatas) => {
    let grouped = groupedOf.get(metadatas);
    if (!grouped) groupedOf.set(metadatas, (grouped = group(metadatas)));
    return grouped;
  };
  const forget = () => {
    byTarget = new WeakMap();
    groupedOf = new WeakMap();
  };
  storage.addValidationMetadata = (metadata) => {
    forget();
    addMetadata(metadata);
  };
  storage.addValidationSchema = (schema) => {
    forget();
    addSchema(schema);
  };
}
