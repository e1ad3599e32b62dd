/**
 * The admin API's request bodies and query strings (TypeBox, compiled once by the gateway's Ajv).
 * A bad value is 400 naming the field as the caller wrote it; an unknown field is refused too,
 * so that a typo (`teir`, `?acount=`) never silently does nothing.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import { GatewayError } from '../errors/index.js';
import { ajv } from '../validation/ajv.js';
import { ajvErrorToGatewayError, locate, typeName } from '../validation/ajv-errors.js';
import { Nullable, StringEnum } from '../validation/schema-helpers.js';
import { ENDPOINT_NAMES, matchesNone } from '../auth/endpoint-names.js';
import { SDK_NAMES } from '../auth/sdk.js';
import { parseApiKey } from '../auth/api-key.js';

/** The same ids as the configuration file's `accounts[].id`. */
const ACCOUNT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$';
export const ACCOUNT_ID = new RegExp(ACCOUNT_ID_PATTERN);
const AccountId = Type.String({
  pattern: ACCOUNT_ID_PATTERN,
  expected: 'an id of 1 to 128 letters, digits and . _ : / -, starting with a letter or digit',
});
/**
 * Free text kept in the store: PostgreSQL refuses a NUL in text, so it is refused here, naming the
 * field. The pattern sits in an allOf of its own so that its `expected` speaks of NUL characters
 * only when one was sent: a value that is no string at all is told it must be a string.
 */
const NO_NUL = { allOf: [{ pattern: '^[^\\u0000]*$', expected: 'text without NUL characters' }] };
const Name = Type.String({ maxLength: 200, ...NO_NUL });
const Tier = Type.String({ minLength: 1 });
const Credits = Type.Number();
const Note = Type.String({ maxLength: 500, ...NO_NUL });
const Globs = Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 256 });

export const ScopeSchema = Type.Object(
  { models: Type.Optional(Globs), endpoints: Type.Optional(Globs), sdks: Type.Optional(Globs) },
  { additionalProperties: false },
);

export const CreateAccountSchema = Type.Object(
  { id: AccountId, name: Type.Optional(Nullable(Name)), tier: Tier, credits: Type.Optional(Credits) },
  { additionalProperties: false },
);

export const UpdateAccountSchema = Type.Object({ name: Type.Optional(Nullable(Name)), tier: Type.Optional(Tier) }, { additionalProperties: false });

export const BalanceChangeSchema = Type.Object({ credits: Credits, note: Type.Optional(Nullable(Note)) }, { additionalProperties: false });

export const CreateKeySchema = Type.Object({ name: Type.Optional(Nullable(Name)), scope: Type.Optional(Nullable(ScopeSchema)) }, { additionalProperties: false });

export const UpdateKeySchema = Type.Object(
  { status: Type.Optional(StringEnum(['active', 'disabled'] as const)), scope: Type.Optional(Nullable(ScopeSchema)), name: Type.Optional(Nullable(Name)) },
  { additionalProperties: false },
);

const Digits = Type.String({ pattern: '^[0-9]{1,9}$', expected: 'a whole number' });
const Day = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', expected: 'a UTC day written YYYY-MM-DD' });
const Filter = Type.String({ minLength: 1, maxLength: 256, ...NO_NUL });

/** Ledger ids have always been `le_` and 32 hex digits; another shape cannot name an entry. */
const LedgerEntryId = Type.String({ pattern: '^le_[0-9a-f]{32}$', expected: 'a ledger entry id (le_ and 32 hex digits): the last_id of the previous page' });

export const LedgerQuerySchema = Type.Object({ limit: Type.Optional(Digits), after: Type.Optional(LedgerEntryId) }, { additionalProperties: false });

export const UsageQuerySchema = Type.Object(
  { account: Type.Optional(Filter), key: Type.Optional(Filter), model: Type.Optional(Filter), from: Type.Optional(Day), to: Type.Optional(Day) },
  { additionalProperties: false },
);

export type Validator<T> = (value: unknown) => T;

/** A compiled validator for a JSON body (`what` = "request body") or a query string. */
function validator<T extends TSchema>(schema: T, what: 'body' | 'query'): Validator<Static<T>> {
  const validate = ajv.compile<Static<T>>(schema);
  return (value) => {
    if (value === undefined || value === null) {
      // A body-less POST or PATCH (a query string is always an object, {} when empty).
      throw new GatewayError('invalid_parameter', 'The request body must be a JSON object; none was sent.', { param: null });
    }
    if (typeof value !== 'object' || Array.isArray(value)) {
      throw new GatewayError('invalid_parameter', `The request body must be a JSON object, got ${typeName(value)}.`, { param: null });
    }
    if (!validate(value)) throw describeError(validate, schema, value, what);
    return value;
  };
}

function describeError(validate: ValidateFunction, schema: TSchema, value: unknown, what: 'body' | 'query'): GatewayError {
  const errors = validate.errors ?? [];
  const last = errors[errors.length - 1];
  // An unknown field, at the top or inside a nullable object (an anyOf whose other branch is null).
  const unknown = errors.find((e) => e.keyword === 'additionalProperties' && (e === last || (last?.keyword === 'anyOf' && e.schemaPath.startsWith(`${last.schemaPath}/`))));
  if (unknown !== undefined) {
    const parent = locate(unknown.instancePath, value).param;
    const extra = String((unknown.params as { additionalProperty: string }).additionalProperty);
    const param = parent === '' ? extra : `${parent}.${extra}`;
    const known = Object.keys(schemaAt(schema, unknown.schemaPath).properties ?? {});
    const kind = what === 'query' ? 'query parameter' : 'field';
    return new GatewayError('invalid_parameter', `Unknown ${kind} '${param}'${known.length > 0 ? ` (known: ${known.join(', ')})` : ''}.`, { param });
  }
  // `?model=a&model=b` is parsed as an array: the mistake is the repetition, not the type.
  const repeated = what === 'query' ? Object.entries(value as object).find(([, v]) => Array.isArray(v)) : undefined;
  if (repeated !== undefined) {
    const [param, values] = repeated as [string, unknown[]];
    return new GatewayError('invalid_parameter', `Query parameter '${param}' was given ${values.length} times; give it once.`, { param });
  }
  return ajvErrorToGatewayError(validate, value);
}

/** The schema holding a failed keyword: `#/properties/scope/anyOf/0/additionalProperties` → `…/anyOf/0`. */
function schemaAt(root: TSchema, schemaPath: string): { properties?: object } {
  let node: unknown = root;
  for (const segment of schemaPath.replace(/^#\//, '').split('/').slice(0, -1)) {
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[segment] : undefined;
  }
  return node !== null && typeof node === 'object' ? node : {};
}

/**
 * An account id is stored, listed and logged in full: one that is a whole API key would show its
 * secret everywhere (error messages mask keys, listings do not). Refused without repeating it.
 */
function checkAccountId(id: string): void {
  if (parseApiKey(id) !== null) {
    throw new GatewayError('invalid_parameter', 'id has the shape of an API key (sk-tg-<id>-<secret>); an account id is shown everywhere, so it may not be a key.', { param: 'id' });
  }
}

const validateCreateAccountShape = validator(CreateAccountSchema, 'body');
export const validateCreateAccount: Validator<Static<typeof CreateAccountSchema>> = (value) => {
  const body = validateCreateAccountShape(value);
  checkAccountId(body.id);
  return body;
};
export const validateUpdateAccount = validator(UpdateAccountSchema, 'body');
export const validateBalanceChange = validator(BalanceChangeSchema, 'body');
export const validateCreateKey = validator(CreateKeySchema, 'body');
export const validateUpdateKey = validator(UpdateKeySchema, 'body');
export const validateLedgerQuery = validator(LedgerQuerySchema, 'query');
export const validateUsageQuery = validator(UsageQuerySchema, 'query');

export type CreateAccountBody = Static<typeof CreateAccountSchema>;
export type UpdateKeyBody = Static<typeof UpdateKeySchema>;

/**
 * A scope's endpoints and SDKs come from fixed lists: a list none of whose entries matches any of
 * them (a typo, `chat/completion`) would have the key refused on every request, so it is refused
 * here instead.
 */
export function checkScopeNames(scope: Static<typeof ScopeSchema> | null | undefined): void {
  if (scope == null) return;
  // Model names are the configuration's, not a fixed list, but an empty list matches none of them.
  if (scope.models?.length === 0) {
    throw new GatewayError('invalid_parameter', 'scope.models is empty, so the key would be refused on every request; leave models out to allow every model of the tier.', { param: 'scope.models' });
  }
  for (const [field, names, what] of [['endpoints', ENDPOINT_NAMES, 'endpoint'], ['sdks', SDK_NAMES, 'SDK']] as const) {
    const globs = scope[field];
    if (globs !== undefined && matchesNone(globs, names)) {
      throw new GatewayError('invalid_parameter', `scope.${field} matches no ${what}, so the key would be refused on every request (${what}s: ${names.join(', ')}).`, { param: `scope.${field}` });
    }
  }
}
