/**
 * Builds the billing parts for the configured storage: with SQLite (one instance) credit holds
 * live in memory; with PostgreSQL, where several instances may share the accounts, in the store.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { longestBudgetMs } from '../config/longest-budget.js';
import type { Store } from '../storage/types.js';
import { Billing } from './billing.js';
import { MemoryCreditGate } from './memory-credits.js';
import { SettlementSpillDirectory } from './settlement-spill.js';
import { SettlementWriter } from './settlement-writer.js';
import { StoreCreditGate } from './store-credits.js';
import { UsageRetention } from './usage-retention.js';
import type { CreditGate } from './types.js';

/** A reservation outlives the longest request by this much before a sweep may release it. */
const RESERVATION_MARGIN_MS = 60_000;

export interface OpenedBilling {
  readonly billing: Billing;
  readonly credits: CreditGate;
  readonly writer: SettlementWriter;
  /** Commits every queued settlement, then stops. */
  close(): Promise<void>;
}

export function openBilling(config: Config, store: Store, logger: Logger): OpenedBilling {
  const credits: CreditGate = config.storage.url.startsWith('sqlite://')
    ? new MemoryCreditGate(store)
    : new StoreCreditGate(store, longestBudgetMs(config) + RESERVATION_MARGIN_MS, logger);
  const writer = new SettlementWriter(store, logger, new SettlementSpillDirectory(config.storage.spill_directory));
  const retentionMs = config.usage.retention_ms;
  const retention = retentionMs === undefined ? null : new UsageRetention(store, retentionMs, logger);
  void retention?.sweep();
  return {
    billing: new Billing(credits, writer),
    credits,
    writer,
    async close() {
      await retention?.close();
      await writer.close();
      await credits.close();
    },
  };
}
