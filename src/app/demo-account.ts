/**
 * The quick start's demo account: created with a fresh random key on the first start of the
 * embedded default, and the key printed once. Only its hash is stored, so it cannot be shown again.
 */
import { generateApiKey } from '../auth/api-key.js';
import { DEMO_TIER } from '../config/embedded-default.js';
import type { Store } from '../storage/types.js';
import { MICROS_PER_CREDIT } from '../billing/pricing.js';

export const DEMO_ACCOUNT_ID = 'demo';
const DEMO_CREDITS = 10;

/** Returns the new key when the demo account was created now, or null if it already existed. */
export async function ensureDemoAccount(store: Store): Promise<string | null> {
  const created = await store.createAccountIfAbsent({
    id: DEMO_ACCOUNT_ID,
    name: 'Demo account',
    tier: DEMO_TIER,
    balanceMicros: DEMO_CREDITS * MICROS_PER_CREDIT,
  });
  if (!created) return null;
  const { key, id, secretHash } = generateApiKey();
  await store.putApiKey({ id, accountId: DEMO_ACCOUNT_ID, name: 'demo key', secretHash, status: 'active', scope: null });
  return key;
}
