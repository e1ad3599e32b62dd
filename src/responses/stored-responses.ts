/**
 * Responses of the Responses API kept for `responses.retention_ms`, so that a later request may
 * name their output items instead of repeating them (`{"type": "item_reference", "id": "msg_…"}`):
 * the Vercel AI SDK's OpenAI provider does so by default for every earlier assistant turn. Kept in
 * the store, so every instance finds them; only for requests that do not say `store: false`, as
 * OpenAI keeps them. Item ids carry their response's (msg_<digits>, fc_<digits>_<n>), so one read
 * finds every item a request names.
 */
import type { Logger } from 'pino';
import type { Store } from '../storage/types.js';
import type { ResponseOutputItem } from '../protocol/responses.js';
import { PeriodicTask } from '../util/periodic-task.js';
import { storeUnavailable } from '../storage/store-unavailable.js';
import { GatewayError } from '../errors/index.js';

const SWEEP_EVERY_MS = 3_600_000;
const SWEEP_BATCH = 1_000;
const ITEM_ID = /^(?:msg|fc)_([0-9a-f]{32})(?:_\d+)?$/;
/** Earlier responses one request may refer to: a conversation of this many turns is far beyond any context window. */
export const MAX_REFERENCED_RESPONSES = 1_000;

/** The id of the response an output item came from, or undefined for an id Tollgate did not make. */
export function responseIdOfItem(itemId: string): string | undefined {
  const digits = ITEM_ID.exec(itemId)?.[1];
  return digits === undefined ? undefined : `resp_${digits}`;
}

export class StoredResponses {
  private readonly sweeper: PeriodicTask;

  constructor(
    private readonly store: Store,
    private readonly retentionMs: number,
    private readonly logger: Logger,
  ) {
    this.sweeper = new PeriodicTask(() => this.deleteExpired(), SWEEP_EVERY_MS, (err) => this.logger.warn({ err }, 'could not sweep expired stored responses; trying again later'));
  }

  /**
   * Keeps a response's output. A failure is logged, not thrown: the answer itself is whole, only a
   * later reference to its items would be refused.
   */
  async keep(accountId: string, responseId: string, output: readonly ResponseOutputItem[]): Promise<void> {
    const now = Date.now();
    try {
      await this.store.putStoredResponse({ id: responseId, accountId, output: JSON.stringify(output), createdAt: now, expiresAt: now + this.retentionMs });
    } catch (err) {
      this.logger.error({ err, response_id: responseId }, 'could not store a response; requests that refer to its items will be refused');
    }
  }

  /** The account's items among `itemIds` that are still kept, by id. */
  async items(accountId: string, itemIds: readonly string[]): Promise<Map<string, ResponseOutputItem>> {
    const responseIds = [...new Set(itemIds.map(responseIdOfItem).filter((id): id is string => id !== undefined))];
    const found = new Map<string, ResponseOutputItem>();
    if (responseIds.length === 0) return found;
    if (responseIds.length > MAX_REFERENCED_RESPONSES) {
      throw new GatewayError('invalid_parameter', `input refers to items of ${responseIds.length} responses; at most ${MAX_REFERENCED_RESPONSES} may be referred to in one request.`, { param: 'input' });
    }
    const responses = await this.store.getStoredResponses(accountId, responseIds, Date.now()).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    for (const response of responses) {
      for (const item of JSON.parse(response.output) as ResponseOutputItem[]) found.set(item.id, item);
    }
    return found;
  }

  private async deleteExpired(): Promise<void> {
    let deleted: number;
    do deleted = await this.store.deleteExpiredStoredResponses(Date.now(), SWEEP_BATCH);
    while (deleted === SWEEP_BATCH);
  }

  async close(): Promise<void> {
    await this.sweeper.stop();
  }
}
