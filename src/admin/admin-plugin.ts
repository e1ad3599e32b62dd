/**
 * The admin API, a Fastify plugin registered under `/admin/v1`: accounts, credits, API keys and
 * usage, for operators. Every route needs `Authorization: Bearer <server.admin_token>`, checked
 * in an onRequest hook of this plugin only (before any body is read; the /v1 hot path has no such
 * hook). Without a configured token every path under /admin/v1 answers 404 `admin_api_disabled`.
 *
 * Errors are thrown as GatewayError and answered by the server's error handler, in the same
 * envelope and with the same X-Request-Id as the rest of the gateway. After every change to an
 * account or key this instance's key cache forgets it, so the next /v1 request sees the change;
 * other instances are told over Redis when it is configured, else see it when their cache entry
 * expires (30 s).
 */
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.js';
import { generateApiKey } from '../auth/api-key.js';
import { KEY_ID, keyIdOf } from '../auth/key-shape.js';
import type { KeyCache } from '../auth/key-cache.js';
import type { CreditGate } from '../billing/types.js';
import { BalanceOutOfRangeError, MAX_BALANCE_MICROS, type AccountRecord, type ApiKeyRecord, type LedgerEntry, type LedgerKind, type Store } from '../storage/types.js';
import type { AccessLog } from '../http/access-log.js';
import { adminTokenCheck } from './admin-token.js';
import { formatMicros, microsFromCredits } from './money.js';
import { keepJsonText, numberText } from './number-text.js';
import {
  ACCOUNT_ID,
  checkScopeNames,
  validateBalanceChange,
  validateCreateAccount,
  validateCreateKey,
  validateLedgerQuery,
  validateUpdateAccount,
  validateUpdateKey,
  validateUsageQuery,
} from './schemas.js';
import {
  MAX_LEDGER_LIMIT,
  accountView,
  apiKeyView,
  ledgerEntryView,
  usageRowView,
  usageTotals,
  type AccountView,
  type ApiKeyView,
  type BalanceChangeView,
  type CreatedApiKeyView,
  type DeletedApiKeyView,
  type LedgerListView,
  type ListView,
  type UsageView,
} from './views.js';

export const ADMIN_PREFIX = '/admin/v1';
export const DEFAULT_LEDGER_LIMIT = 100;
const DAY_MS = 86_400_000;

export interface AdminDeps {
  store: Store;
  /** The hot path's key cache, told about every change. */
  keys: Pick<KeyCache, 'invalidateKey' | 'invalidateAccount'>;
  /** Told about every balance change made here (top-ups, adjustments, opening credit). */
  credits: Pick<CreditGate, 'balanceMoved'>;
  /** The configured tier names; an account's tier must be one of them. */
  tiers: readonly string[];
  /** `server.admin_token`; undefined turns the admin API off. */
  adminToken: string | undefined;
}

type IdParams = { Params: { id: string } };

export function adminPlugin(deps: AdminDeps, accessLog: AccessLog): FastifyPluginCallback {
  return (app, _options, done) => {
    if (deps.adminToken === undefined) {
      // Answered before any body is read: a malformed one must not turn the 404 into a 400.
      app.addHook('onRequest', (_request, _reply, next) => {
        next(new GatewayError('admin_api_disabled', 'The admin API is off: set server.admin_token in the configuration (16 characters or more) to turn it on.'));
      });
      const unreachable = (): never => {
        throw new GatewayError('internal_error', 'An admin route ran with the admin API off.');
      };
      app.all('/', unreachable);
      app.all('/*', unreachable);
      return done();
    }
    keepJsonText(app);
    const check = adminTokenCheck(deps.adminToken);
    app.addHook('onRequest', (request, _reply, next) => {
      try {
        check(request.headers.authorization);
        refuseUnknownQuery(request);
        next();
      } catch (err) {
        next(err as Error);
      }
    });
    new AdminRoutes(deps, accessLog).register(app);
    done();
  };
}

/** Only the routes that list with filters take a query; elsewhere a parameter would be silently ignored. */
function refuseUnknownQuery(request: FastifyRequest): void {
  // An unknown path is the 404 handler's to answer, query or not.
  if (request.routeOptions.url === undefined || request.routeOptions.config.takesQuery === true) return;
  const name = Object.keys(request.query as Record<string, unknown>)[0];
  if (name !== undefined) throw new GatewayError('invalid_parameter', `Unknown query parameter ${name}: this route takes none.`, { param: name });
}

const TAKES_QUERY = { config: { takesQuery: true } };

/** `credits` as the body wrote it, not the double it was parsed to (see number-text.ts). */
function creditsText(request: FastifyRequest, parsed: number): string {
  // Every admin body is parsed by keepJsonText's parser; String() would only lose what the double lost.
  return numberText(request, 'credits') ?? String(parsed);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** An admin route whose query string is validated by the route itself. */
    takesQuery?: boolean;
  }
}

class AdminRoutes {
  private readonly store: Store;

  constructor(
    private readonly deps: AdminDeps,
    private readonly accessLog: AccessLog,
  ) {
    this.store = deps.store;
  }

  register(app: FastifyInstance): void {
    app.post('/accounts', (request, reply) => this.createAccount(request, reply));
    app.get('/accounts', (_request, reply) => this.listAccounts(reply));
    app.get<IdParams>('/accounts/:id', async (request, reply) => this.send(reply, 200, accountView(await this.account(request.params.id))));
    app.patch<IdParams>('/accounts/:id', (request, reply) => this.updateAccount(request, reply));
    app.post<IdParams>('/accounts/:id/topups', (request, reply) => this.changeBalance(request, reply, 'topup'));
    app.post<IdParams>('/accounts/:id/adjustments', (request, reply) => this.changeBalance(request, reply, 'adjustment'));
    app.get<IdParams>('/accounts/:id/ledger', TAKES_QUERY, (request, reply) => this.ledger(request, reply));
    app.post<IdParams>('/accounts/:id/keys', (request, reply) => this.createKey(request, reply));
    app.get<IdParams>('/accounts/:id/keys', (request, reply) => this.listKeys(request, reply));
    app.get<IdParams>('/keys/:id', async (request, reply) => this.send<ApiKeyView>(reply, 200, apiKeyView(await this.apiKey(request.params.id))));
    app.patch<IdParams>('/keys/:id', (request, reply) => this.updateKey(request, reply));
    app.delete<IdParams>('/keys/:id', (request, reply) => this.deleteKey(request, reply));
    app.get('/usage', TAKES_QUERY, (request, reply) => this.usage(request, reply));
  }

  private send<T>(reply: FastifyReply, status: number, body: T): FastifyReply {
    reply.code(status).header('x-request-id', reply.request.id).send(body);
    this.accessLog(reply, status);
    return reply;
  }

  /** An id no account can have is not sent to the store (PostgreSQL refuses a NUL in text: a 500, not the 404 it is). */
  private async account(id: string): Promise<AccountRecord> {
    const account = ACCOUNT_ID.test(id) ? await this.store.getAccount(id) : undefined;
    if (account === undefined) throw new GatewayError('account_not_found', `No account has the id "${id.slice(0, 128)}".`);
    return account;
  }

  private async apiKey(id: string): Promise<ApiKeyRecord> {
    const key = KEY_ID.test(id) ? await this.store.getApiKey(id) : undefined;
    if (key === undefined) throw keyNotFound(id);
    return key;
  }

  private checkTier(tier: string): void {
    if (!this.deps.tiers.includes(tier)) {
      throw new GatewayError('invalid_parameter', `tier "${tier}" is not a configured tier (configured: ${this.deps.tiers.join(', ') || 'none'}).`, { param: 'tier' });
    }
  }

  // ---- accounts ------------------------------------------------------------------------------

  private async createAccount(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const body = validateCreateAccount(request.body);
    this.checkTier(body.tier);
    const credits = body.credits === undefined ? 0 : microsFromCredits(creditsText(request, body.credits), 'credits', 'non-negative');
    // The opening credit is a top-up carrying this request's id, as every admin change is, written
    // in the account's own transaction: a failure leaves no account without it to trip a resend.
    const created = await this.store.createAccountIfAbsent({ id: body.id, name: body.name ?? null, tier: body.tier, balanceMicros: credits, openingRequestId: request.id });
    if (!created) throw new GatewayError('account_already_exists', `An account with the id "${body.id}" already exists.`, { param: 'id' });
    this.deps.keys.invalidateAccount(body.id);
    if (credits > 0) this.deps.credits.balanceMoved(body.id, credits);
    return this.send<AccountView>(reply, 201, accountView(await this.account(body.id)));
  }

  private async listAccounts(reply: FastifyReply): Promise<FastifyReply> {
    const accounts = await this.store.listAccounts();
    return this.send<ListView<AccountView>>(reply, 200, { object: 'list', data: accounts.map(accountView) });
  }

  private async updateAccount(request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<FastifyReply> {
    const body = validateUpdateAccount(request.body);
    if (body.tier === undefined && body.name === undefined) {
      throw new GatewayError('invalid_parameter', 'The body changes nothing: send tier, name or both.', { param: null });
    }
    if (body.tier !== undefined) this.checkTier(body.tier);
    const { id } = request.params;
    await this.account(id);
    await this.store.updateAccount(id, { ...(body.tier !== undefined ? { tier: body.tier } : {}), ...(body.name !== undefined ? { name: body.name } : {}) });
    this.deps.keys.invalidateAccount(id);
    return this.send<AccountView>(reply, 200, accountView(await this.account(id)));
  }

  private async changeBalance(request: FastifyRequest<IdParams>, reply: FastifyReply, kind: Extract<LedgerKind, 'topup' | 'adjustment'>): Promise<FastifyReply> {
    const body = validateBalanceChange(request.body);
    const amount = microsFromCredits(creditsText(request, body.credits), 'credits', kind === 'topup' ? 'positive' : 'non-zero');
    const { id } = request.params;
    await this.account(id);
    let account: AccountRecord;
    try {
      account = await this.store.addLedgerEntry({ accountId: id, kind, amountMicros: amount, requestId: request.id, apiKeyId: null, note: body.note ?? null });
    } catch (err) {
      if (!(err instanceof BalanceOutOfRangeError)) throw err;
      throw new GatewayError('invalid_parameter', `This would take the balance of account "${id}" beyond ±${formatMicros(MAX_BALANCE_MICROS)} credits, the most a balance can hold exactly.`, { param: 'credits' });
    }
    this.deps.credits.balanceMoved(id, amount);
    this.deps.keys.invalidateAccount(id);
    // The entry just written, by this request's id (one entry of a kind per request).
    const entry = await this.store.findLedgerEntry(request.id, kind);
    return this.send<BalanceChangeView>(reply, 201, { object: 'balance_change', entry: entry ? ledgerEntryView(entry) : null, account: accountView(account) });
  }

  private async ledger(request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<FastifyReply> {
    const query = validateLedgerQuery(request.query);
    const limit = query.limit === undefined ? DEFAULT_LEDGER_LIMIT : Number(query.limit);
    if (limit < 1 || limit > MAX_LEDGER_LIMIT) {
      throw new GatewayError('invalid_parameter', `limit must be an integer between 1 and ${MAX_LEDGER_LIMIT}, got ${query.limit}.`, { param: 'limit' });
    }
    const account = await this.account(request.params.id);
    const after = query.after === undefined ? undefined : await this.ledgerCursor(account.id, query.after);
    const entries = await this.store.listLedger(account.id, limit + 1, after);
    const data = entries.slice(0, limit).map(ledgerEntryView);
    const view = accountView(account);
    return this.send<LedgerListView>(reply, 200, {
      object: 'list',
      account_id: account.id,
      balance: view.balance,
      balance_micros: view.balance_micros,
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: entries.length > limit,
    });
  }

  /**
   * The entry a page follows. Entries are never deleted, so an id that is not one of the
   * account's is a mistake (another account's, a typo), refused rather than answered with a page
   * that would look like the end of the ledger.
   */
  private async ledgerCursor(accountId: string, id: string): Promise<LedgerEntry> {
    const entry = await this.store.getLedgerEntry(id);
    if (entry === undefined || entry.accountId !== accountId) {
      throw new GatewayError('invalid_parameter', `No ledger entry of account "${accountId}" has the id "${id}": after takes the last_id of the previous page.`, { param: 'after' });
    }
    return entry;
  }

  // ---- keys ----------------------------------------------------------------------------------

  private async createKey(request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<FastifyReply> {
    const body = validateCreateKey(request.body ?? {});
    checkScopeNames(body.scope);
    const account = await this.account(request.params.id);
    let generated = generateApiKey();
    // 71 random bits make a clash all but impossible; a clash must still never replace a key.
    for (let tries = 0; (await this.store.getApiKey(generated.id)) !== undefined; tries++) {
      if (tries === 3) throw new Error('could not draw an unused key id');
      generated = generateApiKey();
    }
    await this.store.putApiKey({ id: generated.id, accountId: account.id, name: body.name ?? null, secretHash: generated.secretHash, status: 'active', scope: body.scope ?? null });
    this.deps.keys.invalidateKey(generated.id);
    const stored = await this.apiKey(generated.id);
    return this.send<CreatedApiKeyView>(reply, 201, { ...apiKeyView(stored), key: generated.key });
  }

  private async listKeys(request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<FastifyReply> {
    const account = await this.account(request.params.id);
    const keys = await this.store.listApiKeys(account.id);
    return this.send<ListView<ApiKeyView>>(reply, 200, { object: 'list', data: keys.map(apiKeyView) });
  }

  private async updateKey(request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<FastifyReply> {
    const body = validateUpdateKey(request.body);
    checkScopeNames(body.scope);
    if (body.status === undefined && body.scope === undefined && body.name === undefined) {
      throw new GatewayError('invalid_parameter', 'The body changes nothing: send status, scope, name or several of them.', { param: null });
    }
    // Only the fields sent, in one statement: a read-modify-write would undo a change made
    // meanwhile (a disable) or bring back a key deleted meanwhile.
    if (!KEY_ID.test(request.params.id)) throw keyNotFound(request.params.id);
    const changed = await this.store.updateApiKey(request.params.id, {
      ...(body.status !== undefined ? { status: body.status } : {}),
      ...(body.scope !== undefined ? { scope: body.scope } : {}),
      ...(body.name !== undefined ? { name: body.name } : {}),
    });
    if (changed === undefined) throw keyNotFound(request.params.id);
    this.deps.keys.invalidateKey(changed.id);
    return this.send<ApiKeyView>(reply, 200, apiKeyView(changed));
  }

  private async deleteKey(request: FastifyRequest<IdParams>, reply: FastifyReply): Promise<FastifyReply> {
    const { id } = request.params;
    if (!KEY_ID.test(id)) throw keyNotFound(id);
    const deleted = await this.store.deleteApiKey(id);
    this.deps.keys.invalidateKey(id);
    if (!deleted) await this.apiKey(id); // throws api_key_not_found
    return this.send<DeletedApiKeyView>(reply, 200, { object: 'api_key', id, deleted: true });
  }

  // ---- usage ---------------------------------------------------------------------------------

  private async usage(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = validateUsageQuery(request.query);
    const from = query.from === undefined ? undefined : dayStart(query.from, 'from');
    const to = query.to === undefined ? undefined : dayStart(query.to, 'to') + DAY_MS;
    if (from !== undefined && to !== undefined && from >= to) {
      throw new GatewayError('invalid_parameter', `from (${query.from}) is after to (${query.to}).`, { param: 'from' });
    }
    // Accounts are never deleted, so an unknown one is a mistake worth saying; keys may have been
    // deleted while their usage stays, so a key is only a filter.
    if (query.account !== undefined) await this.account(query.account);
    // A whole key given as the filter is taken by its id, as the CLI does, and never echoed.
    const key = query.key === undefined ? undefined : (keyIdOf(query.key) ?? query.key);
    const rows = await this.store.usageSummary({
      ...(query.account !== undefined ? { accountId: query.account } : {}),
      ...(key !== undefined ? { apiKeyId: key } : {}),
      ...(query.model !== undefined ? { model: query.model } : {}),
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
    });
    return this.send<UsageView>(reply, 200, {
      object: 'usage',
      filters: { account: query.account ?? null, key: key ?? null, model: query.model ?? null, from: query.from ?? null, to: query.to ?? null },
      data: rows.map(usageRowView),
      totals: usageTotals(rows),
    });
  }
}

/** Unix milliseconds of 00:00 UTC on a YYYY-MM-DD day, or 400 naming `param` for a day that does not exist. */
function dayStart(day: string, param: string): number {
  const ms = Date.parse(`${day}T00:00:00Z`);
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== day) {
    throw new GatewayError('invalid_parameter', `${param} must be a UTC day written YYYY-MM-DD, got "${day}" (no such day).`, { param });
  }
  return ms;
}

function keyNotFound(id: string): GatewayError {
  // A whole key in the path is not echoed back: give the id, never the secret.
  if (id.startsWith('sk-tg-')) return new GatewayError('api_key_not_found', 'No API key has this id: give the key id (the 12 characters after "sk-tg-"), not the key.');
  return new GatewayError('api_key_not_found', `No API key has the id "${id}".`);
}
