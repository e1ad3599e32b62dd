/**
 * Responses of the Responses API kept for `responses.retention_ms`, as OpenAI keeps them (unless the
 * request says `store: false`), for three uses: a later request may name their output items instead
 * of repeating them (`{"type": "item_reference", "id": "msg_…"}`, which the Vercel AI SDK's OpenAI
 * provider sends for every earlier assistant turn), continue their conversation
 * (`previous_response_id`), or read them back (`GET /v1/responses/{id}`). Kept in the store, so
 * every instance finds them. Item ids carry their response's (msg_<digits>, fc_<digits>_<n>), so
 * one read finds every item a request names; each response keeps its own input and the id of the
 * one it continued, so one recursive read finds a whole conversation.
 */
import type { Logger } from 'pino';
import type { Store, StoredResponse } from '../storage/types.js';
import type { ResponseObject, ResponseOutputItem } from '../protocol/responses.js';
import { PeriodicTask } from '../util/periodic-task.js';
import { storeUnavailable } from '../storage/store-unavailable.js';
import { GatewayError } from '../errors/index.js';

const SWEEP_EVERY_MS = 3_600_000;
const SWEEP_BATCH = 1_000;
const ITEM_ID = /^(?:msg|fc)_([0-9a-f]{32})(?:_\d+)?$/;
/** Earlier responses one request may refer to or continue: a conversation of this many turns is far beyond any context window. */
export const MAX_REFERENCED_RESPONSES = 1_000;

/** What is kept of one response. */
export interface KeptResponse {
  readonly response: ResponseObject;
  /** The request's own input items, references resolved (the conversation before them is the previous response's). */
  readonly input: readonly unknown[];
  readonly previousResponseId: string | null;
}

function previousNotFound(message: string): GatewayError {
  return new GatewayError('previous_response_not_found', message, { param: 'previous_response_id' });
}

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
   * Keeps a response. A failure is logged, not thrown: the answer itself is whole, only a later
   * request that refers to it would be refused.
   */
  async keep(accountId: string, kept: KeptResponse): Promise<void> {
    const now = Date.now();
    const { response } = kept;
    try {
      await this.store.putStoredResponse({
        id: response.id,
        accountId,
        output: JSON.stringify(response.output),
        response: JSON.stringify(response),
        input: JSON.stringify(kept.input),
        previousResponseId: kept.previousResponseId,
        createdAt: now,
        expiresAt: now + this.retentionMs,
      });
    } catch (err) {
      this.logger.error({ err, response_id: response.id }, 'could not store a response; requests that refer to it will be refused');
    }
  }

  /**
   * The items of the conversation `previousResponseId` ended, oldest first: each response's input
   * and then its output, as OpenAI rebuilds it (instructions are not carried over). Refused when
   * any response in it is no longer kept: a conversation with a hole in it is not the one the
   * caller means.
   */
  async conversation(accountId: string, previousResponseId: string): Promise<unknown[]> {
    const chain = await this.store.getStoredResponseChain(accountId, previousResponseId, Date.now(), MAX_REFERENCED_RESPONSES).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    if (chain.length === 0) throw previousNotFound(`Previous response with id '${previousResponseId.slice(0, 80)}' not found.`);
    const oldest = chain[chain.length - 1] as StoredResponse;
    if (oldest.previousResponseId !== null) {
      if (chain.length === MAX_REFERENCED_RESPONSES) {
        throw new GatewayError('invalid_parameter', `The conversation of previous_response_id is longer than ${MAX_REFERENCED_RESPONSES} responses: send it in input.`, { param: 'previous_response_id' });
      }
      throw previousNotFound(`Response '${oldest.previousResponseId.slice(0, 80)}', earlier in the conversation of previous_response_id, is no longer kept: send the whole conversation in input.`);
    }
    const items: unknown[] = [];
    for (let i = chain.length - 1; i >= 0; i--) {
      const response = chain[i] as StoredResponse;
      if (response.input === null) throw previousNotFound(`Response '${response.id}' was kept by an earlier version of Tollgate, without its input: send the whole conversation in input.`);
      items.push(...(JSON.parse(response.input) as unknown[]), ...(JSON.parse(response.output) as unknown[]));
    }
    return items;
  }

  /** The account's kept response as JSON text, or undefined when it is not kept (or was kept without it). */
  async get(accountId: string, id: string): Promise<string | undefined> {
    const [found] = await this.store.getStoredResponses(accountId, [id], Date.now()).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    return found?.response ?? undefined;
  }

  /** Forgets the account's response; whether it was kept. */
  async delete(accountId: string, id: string): Promise<boolean> {
    return this.store.deleteStoredResponse(accountId, id, Date.now()).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
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
