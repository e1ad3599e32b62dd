/**
 * Small TypeBox builders for JSON Schema shapes TypeBox does not produce directly, each typed so
 * that `Static<>` of the result stays exact. See ajv.ts for the `expected` / `rejected` annotations.
 */
import { Type, type SchemaOptions, type Static, type TObject, type TSchema } from '@sinclair/typebox';

/** A string that must be one of `values`, as a single `enum` (one clear error instead of an anyOf of consts). */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

/** `schema` or null. */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  return Type.Union([schema, Type.Null()], options);
}

/**
 * A union of object shapes told apart by the string property `tag` (each branch declares it with a
 * literal or StringEnum). Compiled with Ajv's `discriminator`, so validation goes straight to the
 * branch named by the tag and reports errors inside it, rather than "must match one schema in oneOf".
 */
export function Discriminated<const T extends readonly TObject[]>(tag: string, branches: T, options: SchemaOptions = {}) {
  return Type.Unsafe<Static<T[number]>>({ ...options, type: 'object', discriminator: { propertyName: tag }, oneOf: [...branches] });
}

/**
 * An object used as a dictionary: any keys, every value matching `value`. Uses `additionalProperties`
 * rather than TypeBox's Record (a `patternProperties` regex run against every key).
 */
export function Dict<V extends TSchema>(value: V, options: SchemaOptions = {}) {
  return Type.Unsafe<Record<string, Static<V>>>({ ...options, type: 'object', additionalProperties: value });
}

/** Any JSON object, not looked into (e.g. a JSON Schema supplied by the caller). */
export function AnyObject(options: SchemaOptions = {}) {
  return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object' });
}
