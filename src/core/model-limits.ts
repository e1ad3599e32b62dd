/** The caller's current limits for a model, as GET /v1/models/{model} reports them (spec 8, rule 3). */
import type { Principal } from '../auth/principal.js';
import type { CatalogModel } from '../catalog/model-catalog.js';
import type { LimitPlans } from '../limits/plan.js';
import { uploadPlan } from '../limits/plan.js';
import type { Admission, LimitsView, RateLimiter } from '../limits/types.js';
import { primaryModality } from '../protocol/modalities.js';

export class ModelLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly plans: LimitPlans,
  ) {}

  /** Reads the counters without counting anything. */
  view(principal: Principal, model: CatalogModel): LimitsView | Promise<LimitsView> {
    const plan = this.plans.planFor(principal.tier.name, model.id, primaryModality(model.capabilities));
    return this.limiter.peek(principal.key.id, plan);
  }

  /** Counts an upload in the tier's own pool (see uploadPlan), or throws its 429. */
  admitUpload(principal: Principal, requestId: string): Admission | Promise<Admission> {
    return this.limiter.admit({ keyId: principal.key.id, requestId, plan: uploadPlan(this.plans.ownPlan(principal.tier.name, 'chat')), tokens: 0 });
  }

  /** The tier's own pool for chat, for answers about no model in particular (the model list). */
  tierView(principal: Principal): LimitsView | Promise<LimitsView> {
    return this.limiter.peek(principal.key.id, this.plans.ownPlan(principal.tier.name, 'chat'));
  }
}
