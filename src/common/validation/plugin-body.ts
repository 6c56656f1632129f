import { Transform } from 'class-transformer';

const PLUGIN_BODY_KEY = Symbol('rhythmc:plugin-body');

/**
 * Marks the body DTO of a route the game-server plugin calls. The plugin is a separate program
 * that adds fields over time: on these bodies unknown fields (at any DTO level) are ignored —
 * counted in `rhythmc_ignored_body_fields_total` and logged at debug — instead of refused. Known
 * fields keep their exact checks. The admin API's DTOs stay strict (unmarked).
 */
export const PluginBody = (): ClassDecorator => (target) => {
  Reflect.defineMetadata(PLUGIN_BODY_KEY, true, target);
};

export function isPluginBody(type: unknown): boolean {
  return typeof type === 'function' && Reflect.getMetadata(PLUGIN_BODY_KEY, type) === true;
}

/** On an optional field of a plugin body: `null` means absent (the field is then left out). */
export const NullAsAbsent = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => (value === null ? undefined : value));
