import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/index.js';
import { generateApiKey } from '../auth/api-key.js';
import { checkScopeNames, validateBalanceChange, validateCreateAccount, validateCreateKey, validateLedgerQuery, validateUpdateAccount, validateUpdateKey, validateUsageQuery } from './schemas.js';

/** The 400 `run` throws: its message and param. */
function refusal(run: () => unknown): { message: string; param: string | null } {
  try {
    run();
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    expect(err.code).toBe('invalid_parameter');
    return { message: err.message, param: (err as GatewayError & { param: string | null }).param };
  }
  throw new Error('expected a refusal');
}

describe('admin request validation', () => {
  it.each([
    ['a new key', validateCreateKey, { scope: { models: [] } }],
    ['a change', validateUpdateKey, { scope: { models: [], endpoints: ['*'] } }],
  ])('refuses an empty scope.models in %s, which would refuse every request', (_what, validate, body) => {
    expect(refusal(() => checkScopeNames(validate(body).scope))).toEqual({
      message: 'scope.models is empty, so the key would be refused on every request; leave models out to allow every model of the tier.',
      param: 'scope.models',
    });
  });

  it('takes a scope that leaves models out, or lists some', () => {
    expect(() => checkScopeNames(validateCreateKey({ scope: { endpoints: ['chat/*'] } }).scope)).not.toThrow();
    expect(() => checkScopeNames(validateCreateKey({ scope: { models: ['gpt-*'] } }).scope)).not.toThrow();
  });

  it('refuses an account id shaped like an API key, without repeating it', () => {
    const { key } = generateApiKey();
    const { message, param } = refusal(() => validateCreateAccount({ id: key, tier: 'pro' }));
    expect(param).toBe('id');
    expect(message).toBe('id has the shape of an API key (sk-tg-<id>-<secret>); an account id is shown everywhere, so it may not be a key.');
    expect(() => validateCreateAccount({ id: 'sk-tg-team', tier: 'pro' })).not.toThrow();
  });

  it.each([
    ['a query parameter given twice', () => validateUsageQuery({ model: ['a', 'b'] }), "Query parameter 'model' was given 2 times; give it once.", 'model'],
    ['a limit given three times', () => validateLedgerQuery({ limit: ['1', '2', '3'] }), "Query parameter 'limit' was given 3 times; give it once.", 'limit'],
    ['a name that is a number', () => validateCreateAccount({ id: 'a', tier: 't', name: 5 }), 'name must be a string or null, got number.', 'name'],
    ['a note that is an object', () => validateBalanceChange({ credits: 1, note: {} }), 'note must be a string or null, got object.', 'note'],
    ['a usage filter that is a number', () => validateUsageQuery({ account: 5 }), 'account must be a string, got number.', 'account'],
    ['credits beyond a double', () => validateBalanceChange({ credits: Infinity }), 'credits must be a number, got a number too large to represent.', 'credits'],
    ['negative credits beyond a double', () => validateCreateAccount({ id: 'a', tier: 't', credits: -Infinity }), 'credits must be a number, got a number too large to represent.', 'credits'],
    ['a name with a NUL', () => validateUpdateAccount({ name: 'a\u0000b' }), 'name must be text without NUL characters, got "a\\u0000b".', 'name'],
  ])('says what is wrong with %s', (_what, run, message, param) => {
    expect(refusal(run)).toEqual({ message, param });
  });

  it('reads a body whose credits JSON.parse made Infinity (1e400) as too large', () => {
    expect(refusal(() => validateBalanceChange(JSON.parse('{"credits":1e400}'))).message).toBe('credits must be a number, got a number too large to represent.');
  });
});
