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
import type { Store, StoredResponseTurn } from '../storage/types.js';
import type { ResponseObject, ResponseOutputItem } from '../protocol/responses.js';
import { PeriodicTask } from '../util/periodic-task.js';
import { storeUnavailable } from '../storage/store-unavailable.js';
import { GatewayError } from '../errors/index.js';
import { conversationItems } from './input-items.js';

const SWEEP_EVERY_MS = 3_600_000;
const SWEEP_BATCH = 1_000;
const ITEM_ID = /^(?:msg|fc)_([0-9a-f]{32})(?:_\d+)?$/;
/** Every response id Tollgate makes; anything else is not kept, and is not sent to the store (PostgreSQL refuses a NUL in text). */
const RESPONSE_ID = /^resp_[0-9a-f]{32}$/;
/** Earlier responses one request may refer to or continue: a conversation of this many turns is far beyond any context window. */
export const MAX_REFERENCED_RESPONSES = 1_000;

/** What a request read of earlier responses, and how many bytes of JSON that was (for the request's token bound). */
export interface Loaded<T> {
  readonly value: T;
  readonly bytes: number;
}

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
  /** Conversations being kept longer, in the background of the answers that continued them. */
  private readonly extending = new Set<Promise<void>>();

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
      return;
    }
    // Not waited for: the answer needs only its own response kept; close() waits for these.
    if (kept.previousResponseId !== null) {
      const extending = this.extendConversation(accountId, kept.previousResponseId, now);
      this.extending.add(extending);
      void extending.finally(() => this.extending.delete(extending));
    }
  }

  /**
   * A conversation is kept as long as its last response: continuing it keeps the earlier ones
   * too, else it could not be continued once its first response expired. Only those past half
   * their time are written, so a long conversation rewrites each row about twice a retention
   * period, not once a turn.
   */
  private async extendConversation(accountId: string, previousResponseId: string, now: number): Promise<void> {
    try {
      await this.store.extendStoredResponseChain(accountId, previousResponseId, now, MAX_REFERENCED_RESPONSES, now + this.retentionMs, now + Math.floor(this.retentionMs / 2));
    } catch (err) {
      this.logger.error({ err, response_id: previousResponseId }, 'could not keep a conversation longer; it expires with its first response');
    }
  }

  /**
   * The items of the conversation `previousResponseId` ended, oldest first, in runs: each
   * response's input, then its output, as OpenAI rebuilds it (instructions are not carried over).
   * A run is one side's turn: a function call that starts an output is the model's, not part of
   * the message that ended the input before it. Refused when
   * any response in it is no longer kept: a conversation with a hole in it is not the one the
   * caller means.
   */
  async conversation(accountId: string, previousResponseId: string): Promise<Loaded<unknown[][]>> {
    const notFound = (): GatewayError => previousNotFound(`Previous response with id '${previousResponseId.slice(0, 80)}' not found.`);
    if (!RESPONSE_ID.test(previousResponseId)) throw notFound();
    const chain = await this.store.getStoredResponseChain(accountId, previousResponseId, Date.now(), MAX_REFERENCED_RESPONSES).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    if (chain.length === 0) throw notFound();
    const oldest = chain[chain.length - 1] as StoredResponseTurn;
    if (oldest.previousResponseId !== null) {
      if (chain.length === MAX_REFERENCED_RESPONSES) {
        throw new GatewayError('invalid_parameter', `The conversation of previous_response_id is longer than ${MAX_REFERENCED_RESPONSES} responses: send it in input.`, { param: 'previous_response_id' });
      }
      throw previousNotFound(`Response '${oldest.previousResponseId.slice(0, 80)}', earlier in the conversation of previous_response_id, is no longer kept: send the whole conversation in input.`);
    }
    const runs: unknown[][] = [];
    let bytes = 0;
    for (let i = chain.length - 1; i >= 0; i--) {
      const turn = chain[i] as StoredResponseTurn;
      if (turn.input === null) throw previousNotFound(`Response '${turn.id}' was kept by an earlier version of Tollgate, without its input: send the whole conversation in input.`);
      runs.push(JSON.parse(turn.input) as unknown[], JSON.parse(turn.output) as unknown[]);
      bytes += Buffer.byteLength(turn.input) + Buffer.byteLength(turn.output);
    }
    return { value: runs.filter((run) => run.length > 0), bytes };
  }

  /** The account's kept response as JSON text, or undefined when it is not kept (or was kept without it). */
  async get(accountId: string, id: string): Promise<string | undefined> {
    if (!RESPONSE_ID.test(id)) return undefined;
    const [found] = await this.store.getStoredResponses(accountId, [id], Date.now()).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    return found?.response ?? undefined;
  }

  /**
   * The items the account's response was generated from, oldest first (src/responses/input-items.ts),
   * or undefined when it is not kept. Of a conversation with a hole (an earlier response deleted),
   * the part after the hole.
   */
  async inputItems(accountId: string, id: string): Promise<Array<Record<string, unknown> & { id: string }> | undefined> {
    if (!RESPONSE_ID.test(id)) return undefined;
    // One more than a request may continue: a response that continued the longest conversation is listed whole.
    const chain = await this.store.getStoredResponseChain(accountId, id, Date.now(), MAX_REFERENCED_RESPONSES + 1).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    if (chain.length === 0) return undefined;
    const turns = chain.reverse().map((turn) => ({
      responseId: turn.id,
      input: turn.input === null ? [] : (JSON.parse(turn.input) as unknown[]),
      // The listed response's own output is what it made, not what it was made from.
      output: turn.id === id ? [] : (JSON.parse(turn.output) as unknown[]),
    }));
    return conversationItems(turns);
  }

  /** Forgets the account's response; whether it was kept. */
  async delete(accountId: string, id: string): Promise<boolean> {
    if (!RESPONSE_ID.test(id)) return false;
    return this.store.deleteStoredResponse(accountId, id, Date.now()).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
  }

  /** The account's items among `itemIds` that are still kept, by id. */
  async items(accountId: string, itemIds: readonly string[]): Promise<Loaded<Map<string, ResponseOutputItem>>> {
    const responseIds = [...new Set(itemIds.map(responseIdOfItem).filter((id): id is string => id !== undefined))];
    const found = new Map<string, ResponseOutputItem>();
    if (responseIds.length === 0) return { value: found, bytes: 0 };
    if (responseIds.length > MAX_REFERENCED_RESPONSES) {
      throw new GatewayError('invalid_parameter', `input refers to items of ${responseIds.length} responses; at most ${MAX_REFERENCED_RESPONSES} may be referred to in one request.`, { param: 'input' });
    }
    const responses = await this.store.getStoredResponseOutputs(accountId, responseIds, Date.now()).catch((err: unknown) => {
      throw storeUnavailable(err);
    });
    let bytes = 0;
    for (const response of responses) {
      for (const item of JSON.parse(response.output) as ResponseOutputItem[]) found.set(item.id, item);
      bytes += Buffer.byteLength(response.output);
    }
    return { value: found, bytes };
  }

  private async deleteExpired(): Promise<void> {
    let deleted: number;
    do deleted = await this.store.deleteExpiredStoredResponses(Date.now(), SWEEP_BATCH);
    while (deleted === SWEEP_BATCH);
  }

  async close(): Promise<void> {
    await this.sweeper.stop();
    await Promise.all(this.extending);
  }
}
