/**
 * Which limits apply to a request: a tier's own limits, or those of the first of its
 * `model_limits` groups that matches the model. A quantity a group leaves out is shared with the
 * tier's pool, so a group that only lowers requests per minute still shares the key's in-flight
 * slots and token budget with the tier's other models. Plans are resolved once per tier, model and
 * modality and then served from a map.
 */
import type { LimitsConfig, TierConfig } from '../config/schema.js';
import type { Modality } from '../protocol/modalities.js';
import { GlobList } from '../util/glob.js';

/** One limited quantity: its number and the pool its counter lives in. */
export interface Quota {
  readonly limit: number;
  /** Part of the counter's name: `*` for the tier's own pool, `<tier>/<n>` for an override group. */
  readonly pool: string;
}

export interface LimitPlan {
  readonly tier: string;
  readonly model: string;
  readonly modality: Modality;
  readonly requestsPerMinute: Quota | null;
  readonly tokensPerMinute: Quota | null;
  readonly daily: Quota | null;
  readonly inFlight: Quota | null;
}

const TIER_POOL = '*';

/**
 * The requests per minute of a tier that sets none. Every answer of a limited endpoint, and every
 * 429 whatever quantity ran out, carries X-RateLimit-Limit, -Remaining and -Reset (spec 8), which
 * are requests per minute: so every tier has such a limit, this one high enough (about 16,700 a
 * second for one key) never to be what refuses a request in practice.
 */
export const DEFAULT_REQUESTS_PER_MINUTE = 1_000_000;

function quota(own: number | undefined, ownPool: string, inherited: number | undefined): Quota | null {
  if (own !== undefined) return { limit: own, pool: ownPool };
  return inherited === undefined ? null : { limit: inherited, pool: TIER_POOL };
}

export class TierLimits {
  private readonly base: LimitsConfig;
  private readonly groups: Array<{ models: GlobList; limits: LimitsConfig; pool: string }>;
  private readonly plans = new Map<string, LimitPlan>();

  constructor(
    private readonly tier: string,
    config: TierConfig,
  ) {
    this.base = { ...config.limits, requests_per_minute: config.limits.requests_per_minute ?? DEFAULT_REQUESTS_PER_MINUTE };
    this.groups = config.model_limits.map((group, i) => ({ models: new GlobList(group.models), limits: group.limits, pool: `${tier}/${i}` }));
  }

  /** The tier's own limits, whatever the model: for answers about no model in particular. */
  ownPlan(modality: Modality): LimitPlan {
    return this.planFor('', modality, false);
  }

  planFor(model: string, modality: Modality, withGroups = true): LimitPlan {
    if (!withGroups) return this.resolve(model, modality, []);
    const key = `${modality}\u0000${model}`;
    let plan = this.plans.get(key);
    if (plan === undefined) {
      plan = this.resolve(model, modality, this.groups);
      this.plans.set(key, plan);
    }
    return plan;
  }

  private resolve(model: string, modality: Modality, groups: TierLimits['groups']): LimitPlan {
    const group = groups.find((g) => g.models.matches(model));
    const own: LimitsConfig = group?.limits ?? { daily: {} };
    const pool = group?.pool ?? TIER_POOL;
    const base = this.base;
    return {
      tier: this.tier,
      model,
      modality,
      requestsPerMinute: quota(own.requests_per_minute, pool, base.requests_per_minute),
      tokensPerMinute: quota(own.tokens_per_minute, pool, base.tokens_per_minute),
      daily: quota(own.daily[modality], pool, base.daily[modality]),
      inFlight: quota(own.max_in_flight, pool, base.max_in_flight),
    };
  }
}

/** Limit plans for every tier of the configuration. */
export class LimitPlans {
  private readonly tiers: Map<string, TierLimits>;

  constructor(tiers: Readonly<Record<string, TierConfig>>) {
    this.tiers = new Map(Object.entries(tiers).map(([name, config]) => [name, new TierLimits(name, config)]));
  }

  planFor(tier: string, model: string, modality: Modality): LimitPlan {
    return this.tier(tier).planFor(model, modality);
  }

  ownPlan(tier: string, modality: Modality): LimitPlan {
    return this.tier(tier).ownPlan(modality);
  }

  private tier(name: string): TierLimits {
    const limits = this.tiers.get(name);
    // The authenticator refuses keys whose tier is not configured, so this is a wiring fault.
    if (limits === undefined) throw new Error(`no limits for unknown tier "${name}"`);
    return limits;
  }
}

/**
 * What an upload counts (POST /v1/files, in the tier's own pool): a request per minute and an
 * in-flight slot while it is received, which for a file of hundreds of megabytes is what a key's
 * concurrency limit is for; no daily cap, since it serves no model (admitted for 0 tokens, so that
 * its answer still carries the token headers).
 */
export function uploadPlan(plan: LimitPlan): LimitPlan {
  return { ...plan, daily: null };
}

/**
 * What a replayed response counts: a request per minute, and no tokens (it is admitted for 0, so
 * that its answer still carries the token headers); no daily cap and no slot.
 */
export function replayPlan(plan: LimitPlan): LimitPlan {
  return { ...plan, daily: null, inFlight: null };
}
