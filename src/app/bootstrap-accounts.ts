/**
 * Accounts and keys named in the configuration are written to the store at every start, so they
 * live beside those created at run time. The configuration wins for what it states (an account's
 * name and tier; a key's account, name, status and scope). Credits are only granted when the
 * account is first created: after that the balance belongs to the ledger, not to the file.
 */
import type { AccountConfig } from '../config/schema.js';
import { hashSecret, parseApiKey } from '../auth/api-key.js';
import type { Store } from '../storage/types.js';
import { MICROS_PER_CREDIT } from '../billing/pricing.js';

export async function bootstrapAccounts(store: Store, accounts: readonly AccountConfig[]): Promise<void> {
  for (const account of accounts) {
    const created = await store.createAccountIfAbsent({
      id: account.id,
      name: account.name ?? null,
      tier: account.tier,
      // validateConfig refused credits with more than six decimals: this only undoes the double's error.
      balanceMicros: Math.round(account.credits * MICROS_PER_CREDIT),
    });
    if (!created) await store.updateAccount(account.id, { name: account.name ?? null, tier: account.tier });
    for (const key of account.keys) {
      const parsed = parseApiKey(key.key);
      // validateConfig has already rejected keys that do not parse.
      if (parsed === null) continue;
      await store.putApiKey({
        id: parsed.id,
        accountId: account.id,
        name: key.name ?? null,
        secretHash: hashSecret(parsed.secret),
        status: key.status,
        scope: key.scope ?? null,
      });
    }
  }
}
