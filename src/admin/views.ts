/**
 * What the admin API answers: store records in the API's snake_case shapes, money both as credits
 * (a decimal number) and as exact `*_micros` integers, times as ISO 8601 UTC. Secret hashes never
 * leave the store. The CLI reads these same types.
 */
import { redactKey } from '../auth/api-key.js';
import type { AccountRecord, ApiKeyRecord, KeyScope, KeyStatus, LedgerEntry, LedgerKind, UsageRow } from '../storage/types.js';
import { creditsOf } from './money.js';

export interface AccountView {
  object: 'account';
  id: string;
  name: string | null;
  tier: string;
  balance: number;
  balance_micros: number;
  created_at: string;
}

export interface ApiKeyView {
  object: 'api_key';
  /** The public id: the part after `sk-tg-`; what the key routes take. */
  id: string;
  /** The key as it may be shown: `sk-tg-<id>-…`. */
  redacted: string;
  account_id: string;
  name: string | null;
  status: KeyStatus;
  scope: KeyScope | null;
  created_at: string;
}

/** The answer to a key creation: the only time the full key is ever shown. */
export interface CreatedApiKeyView extends ApiKeyView {
  key: string;
}

export interface DeletedApiKeyView {
  object: 'api_key';
  id: string;
  deleted: true;
}

export interface LedgerEntryView {
  object: 'ledger_entry';
  id: string;
  account_id: string;
  kind: LedgerKind;
  amount: number;
  amount_micros: number;
  request_id: string | null;
  api_key_id: string | null;
  note: string | null;
  created_at: string;
}

/** The answer to a top-up or an adjustment: the entry written and the account after it. */
export interface BalanceChangeView {
  object: 'balance_change';
  entry: LedgerEntryView | null;
  account: AccountView;
}

export interface ListView<T> {
  object: 'list';
  data: T[];
}

/** The most ledger entries one page holds (`?limit=`); the CLI checks its `--limit` against it too. */
export const MAX_LEDGER_LIMIT = 1000;

/** One page of a ledger, newest first, in OpenAI's list shape plus the account's balance. */
export interface LedgerListView extends ListView<LedgerEntryView> {
  account_id: string;
  balance: number;
  balance_micros: number;
  first_id: string | null;
  /** What `after` takes to read the next page. */
  last_id: string | null;
  /** Whether older entries follow this page. */
  has_more: boolean;
}

export interface UsageTotals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  cost_micros: number;
}

export interface UsageRowView extends UsageTotals {
  /** UTC day, YYYY-MM-DD. */
  day: string;
  account_id: string;
  api_key_id: string;
  model: string;
}

export interface UsageView {
  object: 'usage';
  filters: { account: string | null; key: string | null; model: string | null; from: string | null; to: string | null };
  data: UsageRowView[];
  totals: UsageTotals;
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function accountView(account: AccountRecord): AccountView {
  return {
    object: 'account',
    id: account.id,
    name: account.name,
    tier: account.tier,
    balance: creditsOf(account.balanceMicros),
    balance_micros: account.balanceMicros,
    created_at: iso(account.createdAt),
  };
}

export function apiKeyView(key: ApiKeyRecord): ApiKeyView {
  return {
    object: 'api_key',
    id: key.id,
    redacted: redactKey(key.id),
    account_id: key.accountId,
    name: key.name,
    status: key.status,
    scope: key.scope,
    created_at: iso(key.createdAt),
  };
}

export function ledgerEntryView(entry: LedgerEntry): LedgerEntryView {
  return {
    object: 'ledger_entry',
    id: entry.id,
    account_id: entry.accountId,
    kind: entry.kind,
    amount: creditsOf(entry.amountMicros),
    amount_micros: entry.amountMicros,
    request_id: entry.requestId,
    api_key_id: entry.apiKeyId,
    note: entry.note,
    created_at: iso(entry.createdAt),
  };
}

export function usageRowView(row: UsageRow): UsageRowView {
  return {
    day: row.day,
    account_id: row.accountId,
    api_key_id: row.apiKeyId,
    model: row.model,
    requests: row.requests,
    prompt_tokens: row.promptTokens,
    completion_tokens: row.completionTokens,
    total_tokens: row.promptTokens + row.completionTokens,
    cost: creditsOf(row.costMicros),
    cost_micros: row.costMicros,
  };
}

export function usageTotals(rows: readonly UsageRow[]): UsageTotals {
  let requests = 0;
  let prompt = 0;
  let completion = 0;
  let cost = 0;
  for (const row of rows) {
    requests += row.requests;
    prompt += row.promptTokens;
    completion += row.completionTokens;
    cost += row.costMicros;
  }
  return { requests, prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cost: creditsOf(cost), cost_micros: cost };
}
