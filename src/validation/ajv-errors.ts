/**
 * Turning Ajv's first error into a GatewayError a human can act on: `param` is the offending field
 * in the request's own naming (`messages[0].content`, `tools[2].function.name`), and the message
 * says what was expected and what was received. Ajv's own wording is never shown.
 *
 * Relies on `allErrors: false` (ajv.ts): the last error is the one that failed the validation;
 * earlier ones belong to anyOf branches tried before it. The failing value and schema are found
 * from the error's paths (Ajv's `verbose` option would attach them, but slows every validation).
 * Messages use the `expected` / `rejected` / `note` schema annotations when present and otherwise
 * describe the schema.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { GatewayError } from '../errors/index.js';

type Schema = Record<string, unknown>;

/** The single error to report after `validate(data)` returned false. */
export function ajvErrorToGatewayError(validate: ValidateFunction, data: unknown): GatewayError {
  const errors = validate.errors;
  const cause = errors && errors.length > 0 ? pickCause(errors) : undefined;
  if (!cause) return new GatewayError('invalid_parameter', 'The request is invalid.');
  return describe(cause, data, validate.schema as Schema);
}

// ---- choosing the error ----------------------------------------------------------------------

/**
 * The last error is what failed. If it is an `anyOf` (a union such as "string or array"), its
 * branches' errors precede it; when exactly one branch matched the value's type, the real problem
 * is inside that branch (e.g. a bad content part), so report that branch's error instead.
 */
function pickCause(errors: readonly ErrorObject[]): ErrorObject | undefined {
  const cause = errors[errors.length - 1];
  if (!cause || cause.keyword !== 'anyOf') return cause;
  const branches = new Map<string, ErrorObject[]>();
  const prefix = `${cause.schemaPath}/`;
  for (let i = 0; i < errors.length - 1; i++) {
    const e = errors[i]!;
    if (!e.schemaPath.startsWith(prefix)) continue;
    const branch = e.schemaPath.slice(prefix.length).split('/', 1)[0]!;
    const list = branches.get(branch);
    if (list) list.push(e);
    else branches.set(branch, [e]);
  }
  let applicable: ErrorObject | undefined;
  let count = 0;
  for (const list of branches.values()) {
    const inner = pickCause(list);
    if (!inner) continue;
    const ruledOutByType =
      inner.instancePath === cause.instancePath && (inner.keyword === 'type' || inner.keyword === 'enum' || inner.keyword === 'const');
    if (!ruledOutByType) {
      applicable = inner;
      count++;
    }
  }
  return count === 1 ? applicable : cause;
}

// ---- describing it ---------------------------------------------------------------------------

function describe(e: ErrorObject, root: unknown, rootSchema: Schema): GatewayError {
  const { param, data } = locate(e.instancePath, root);
  const schema = parentSchemaOf(e.schemaPath, rootSchema);
  const params = e.params as Record<string, unknown>;
  const bad = (message: string, p: string | null = param) => new GatewayError('invalid_parameter', message, { param: p || null });

  switch (e.keyword) {
    case 'required': {
      const missing = childParam(param, String(params.missingProperty));
      return new GatewayError('missing_required_parameter', `Missing required parameter: '${missing}'.`, { param: missing });
    }
    case 'discriminator': {
      const tagName = String(params.tag);
      const tagParam = childParam(param, tagName);
      const tagValue = params.tagValue;
      if (tagValue === undefined) {
        return new GatewayError('missing_required_parameter', `Missing required parameter: '${tagParam}'.`, { param: tagParam });
      }
      if (typeof tagValue !== 'string') return bad(`${tagParam} must be a string, got ${typeName(tagValue)}.`, tagParam);
      const reason = rejectedReason(schema, tagValue);
      if (reason) return bad(`${tagParam} ${formatValue(tagValue)} is not supported: ${reason}.`, tagParam);
      return bad(`${tagParam} must be ${oneOfList(tagValues(schema, tagName))}${note(schema)}, got ${formatValue(tagValue)}.`, tagParam);
    }
    case 'type':
    case 'anyOf':
    case 'oneOf':
      return bad(`${param} must be ${expected(schema)}, got ${received(data, schema)}.`);
    case 'enum':
    case 'const': {
      const reason = typeof data === 'string' ? rejectedReason(schema, data) : undefined;
      if (reason) return bad(`${param} ${formatValue(data)} is not supported: ${reason}.`);
      return bad(`${param} must be ${expected(schema)}${note(schema)}, got ${formatValue(data)}.`);
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return bad(`${param} must be ${range(schema)}, got ${formatValue(data)}.`);
    case 'minLength':
      if (params.limit === 1) return bad(`${param} must be a non-empty string.`);
      return bad(`${param} must be at least ${String(params.limit)} characters long, got ${lengthOf(data)}.`);
    case 'maxLength':
      return bad(`${param} must be at most ${String(params.limit)} characters long, got ${lengthOf(data)}.`);
    case 'minItems':
      return bad(`${param} must contain at least ${plural(params.limit, 'item')}, got ${lengthOf(data)}.`);
    case 'maxItems':
      return bad(`${param} must contain at most ${plural(params.limit, 'item')}, got ${lengthOf(data)}.`);
    case 'minProperties':
      return bad(`${param} must have at least ${plural(params.limit, 'key')}, got ${keyCount(data)}.`);
    case 'maxProperties':
      return bad(`${param} must have at most ${plural(params.limit, 'key')}, got ${keyCount(data)}.`);
    case 'pattern':
      return bad(`${param} must be ${expected(schema)}, got ${formatValue(data)}.`);
    case 'propertyNames': {
      const names = (schema.propertyNames ?? {}) as Schema;
      const rule = typeof names.expected === 'string' ? names.expected : 'valid';
      return bad(`${param} has an invalid key ${formatValue(params.propertyName)}: keys must be ${rule}.`);
    }
    default:
      return bad(`${param} is invalid.`);
  }
}

/** A human phrase for what `schema` accepts: its `expected` annotation, or one built from its keywords. */
export function expected(schema: Schema): string {
  if (typeof schema.expected === 'string') return schema.expected;
  if ('const' in schema) return formatValue(schema.const);
  if (Array.isArray(schema.enum)) return oneOfList(schema.enum);
  if (Array.isArray(schema.anyOf)) {
    // Enum branches are spread into one list: 'one of "low", "high" or null', not '... or "high" or null'.
    const items: string[] = [];
    let listed = false;
    for (const branch of schema.anyOf as Schema[]) {
      if (typeof branch.expected !== 'string' && Array.isArray(branch.enum)) {
        items.push(...branch.enum.map(formatValue));
        listed = true;
      } else {
        items.push(expected(branch));
      }
    }
    return listed ? choice(items) : orList(items);
  }
  switch (schema.type) {
    case 'string':
      return typeof schema.pattern === 'string' ? `a string matching /${schema.pattern}/` : 'a string';
    case 'integer':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'a boolean';
    case 'null':
      return 'null';
    case 'array':
      return 'an array';
    case 'object':
      return 'an object';
    default:
      return 'valid';
  }
}

/**
 * What the caller sent, for "got ...": its JSON type, or the value itself when its type was right
 * but its value was not (a string where a union allows only certain strings; 1.5 for an integer).
 */
function received(data: unknown, schema: Schema): string {
  // JSON.parse reads 1e400 as Infinity, which no number schema takes: "got number" would say nothing.
  if (typeof data === 'number' && !Number.isFinite(data)) return 'a number too large to represent';
  if (typeof data === 'number' && !Number.isInteger(data) && accepts(schema, 'integer')) return String(data);
  if (typeof data === 'string' && accepts(schema, 'string')) return formatValue(data);
  return typeName(data);
}

/** Whether `schema` (or a branch of it) accepts values of JSON type `type`. */
function accepts(schema: Schema, type: string): boolean {
  return schema.type === type || (Array.isArray(schema.anyOf) && (schema.anyOf as Schema[]).some((s) => accepts(s, type)));
}

function note(schema: Schema): string {
  return typeof schema.note === 'string' ? ` for ${schema.note}` : '';
}

function range(schema: Schema): string {
  const kind = schema.type === 'integer' ? 'an integer' : 'a number';
  const { minimum: min, maximum: max } = schema;
  if (typeof min === 'number' && typeof max === 'number') return `${kind} between ${min} and ${max}`;
  if (typeof min === 'number') return `${kind} of at least ${min}`;
  if (typeof max === 'number') return `${kind} of at most ${max}`;
  return kind;
}

function rejectedReason(schema: Schema, value: string): string | undefined {
  const rejected = schema.rejected as Record<string, string> | undefined;
  return rejected && Object.hasOwn(rejected, value) ? rejected[value] : undefined;
}

/** The tag values a discriminated union accepts, in schema order. */
function tagValues(schema: Schema, tagName: string): unknown[] {
  const values: unknown[] = [];
  for (const branch of (schema.oneOf ?? []) as Schema[]) {
    const prop = ((branch.properties ?? {}) as Record<string, Schema>)[tagName];
    if (!prop) continue;
    if ('const' in prop) values.push(prop.const);
    else if (Array.isArray(prop.enum)) values.push(...(prop.enum as unknown[]));
  }
  return values;
}

// ---- formatting ------------------------------------------------------------------------------

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

const MAX_SHOWN = 60;

function formatValue(value: unknown): string {
  if (typeof value === 'string' && value.length > MAX_SHOWN) return JSON.stringify(`${value.slice(0, MAX_SHOWN)}…`);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
}

/** '"a"', '"a" or "b"', 'one of "a", "b" or "c"'. */
function oneOfList(values: readonly unknown[]): string {
  return choice(values.map(formatValue));
}

function choice(items: readonly string[]): string {
  return `${items.length > 2 ? 'one of ' : ''}${orList(items)}`;
}

function orList(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}

function plural(n: unknown, word: string): string {
  return `${String(n)} ${word}${n === 1 ? '' : 's'}`;
}

function lengthOf(data: unknown): string {
  return typeof data === 'string' || Array.isArray(data) ? String(data.length) : typeName(data);
}

function keyCount(data: unknown): string {
  return data !== null && typeof data === 'object' ? String(Object.keys(data).length) : typeName(data);
}

// ---- params ----------------------------------------------------------------------------------

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * The value at a JSON pointer (`/messages/0/content`), and the pointer as the request's own naming
 * (`messages[0].content`). Array indices become `[i]`; object keys become `.key`, or `["key"]`
 * when not identifier-like (e.g. `logit_bias["50256"]`).
 */
export function locate(instancePath: string, root: unknown): { param: string; data: unknown } {
  let param = '';
  let node: unknown = root;
  if (instancePath === '') return { param, data: node };
  for (const segment of pointerSegments(instancePath)) {
    if (Array.isArray(node)) {
      param += `[${segment}]`;
      node = node[Number(segment)];
    } else {
      param = childParam(param, segment);
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[segment] : undefined;
    }
  }
  return { param, data: node };
}

/** The schema holding the failed keyword: `#/properties/n/anyOf/0/maximum` -> the schema at `.../anyOf/0`. */
function parentSchemaOf(schemaPath: string, rootSchema: Schema): Schema {
  const segments = pointerSegments(schemaPath.replace(/^#/, ''));
  let node: unknown = rootSchema;
  for (let i = 0; i < segments.length - 1 && node !== null && typeof node === 'object'; i++) {
    node = (node as Record<string, unknown>)[segments[i]!];
  }
  return node !== null && typeof node === 'object' ? (node as Schema) : {};
}

function pointerSegments(pointer: string): string[] {
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function childParam(parent: string, key: string): string {
  if (!IDENTIFIER.test(key)) return `${parent}[${JSON.stringify(key)}]`;
  return parent === '' ? key : `${parent}.${key}`;
}
