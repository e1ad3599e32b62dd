/**
 * `tollgate accounts ...`: accounts and their credits, through a running gateway's admin API.
 */
import { MAX_LEDGER_LIMIT, type AccountView, type BalanceChangeView, type LedgerListView, type ListView } from '../admin/views.js';
import { creditsArg, parseCommand, seg } from './admin-client.js';
import { credits, fields, orDash, printJson, table, time } from './output.js';
import { UsageError } from './usage-error.js';

export const ACCOUNTS_HELP = `  accounts list                         Accounts with their tier and balance.
  accounts show ID                      One account.
  accounts create ID --tier T [--name N] [--credits C]
                                        Create an account (C: opening credit).
  accounts set-tier ID TIER             Change the tier (applies to the next request).
  accounts set-name ID NAME             Change the display name.
  accounts topup ID CREDITS [--note N]  Add credit (a "topup" ledger entry).
  accounts adjust ID CREDITS [--note N] Correct the balance up or down, e.g. -2.5
                                        (an "adjustment" ledger entry).
  accounts ledger ID [--limit N] [--after ENTRY]
                                        Ledger entries, newest first, N at a time (default
                                        20, at most 1000); --after the last entry shown
                                        reads on.`;

export function accountBlock(account: AccountView): string {
  return fields([
    ['id', account.id],
    ['name', orDash(account.name)],
    ['tier', account.tier],
    ['balance', `${credits(account.balance_micros)} credits`],
    ['created', time(account.created_at)],
  ]);
}

export async function accounts(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'list': {
      const cmd = parseCommand(rest, {}, [], 'accounts list');
      const list = await cmd.client().get<ListView<AccountView>>('/accounts');
      if (cmd.json) printJson(list);
      else if (list.data.length === 0) console.log('No accounts.');
      else console.log(table(['ID', 'NAME', 'TIER', 'BALANCE', 'CREATED'], list.data.map((a) => [a.id, orDash(a.name), a.tier, credits(a.balance_micros), time(a.created_at)]), ['BALANCE']));
      return 0;
    }
    case 'show': {
      const cmd = parseCommand(rest, {}, ['ID'], 'accounts show ID');
      const account = await cmd.client().get<AccountView>(`/accounts/${seg(cmd.positionals[0]!)}`);
      if (cmd.json) printJson(account);
      else console.log(accountBlock(account));
      return 0;
    }
    case 'create': {
      const cmd = parseCommand(rest, { tier: { type: 'string' }, name: { type: 'string' }, credits: { type: 'string' } }, ['ID'], 'accounts create ID --tier T [--name N] [--credits C]');
      const tier = cmd.values.tier as string | undefined;
      if (tier === undefined) throw new UsageError('accounts create needs --tier (a tier named in the configuration)');
      const opening = cmd.values.credits as string | undefined;
      const body = {
        id: cmd.positionals[0],
        tier,
        ...(cmd.values.name !== undefined ? { name: cmd.values.name } : {}),
        ...(opening !== undefined ? { credits: creditsArg(opening, '--credits') } : {}),
      };
      const account = await cmd.client().post<AccountView>('/accounts', body);
      if (cmd.json) printJson(account);
      else console.log(`Created account ${account.id}.\n${accountBlock(account)}`);
      return 0;
    }
    case 'set-tier':
    case 'set-name': {
      const field = sub === 'set-tier' ? 'tier' : 'name';
      const cmd = parseCommand(rest, {}, ['ID', field.toUpperCase()], `accounts ${sub} ID ${field.toUpperCase()}`);
      const [id, value] = cmd.positionals as [string, string];
      const account = await cmd.client().patch<AccountView>(`/accounts/${seg(id)}`, { [field]: value });
      if (cmd.json) printJson(account);
      else console.log(accountBlock(account));
      return 0;
    }
    case 'topup':
    case 'adjust': {
      const cmd = parseCommand(rest, { note: { type: 'string' } }, ['ID', 'CREDITS'], `accounts ${sub} ID CREDITS [--note N]`);
      const [id, amount] = cmd.positionals as [string, string];
      const body = { credits: creditsArg(amount, 'CREDITS'), ...(cmd.values.note !== undefined ? { note: cmd.values.note } : {}) };
      const change = await cmd.client().post<BalanceChangeView>(`/accounts/${seg(id)}/${sub === 'topup' ? 'topups' : 'adjustments'}`, body);
      if (cmd.json) printJson(change);
      else {
        const moved = change.entry ? credits(change.entry.amount_micros) : String(body.credits);
        console.log(`${sub === 'topup' ? 'Topped up' : 'Adjusted'} ${change.account.id} by ${moved} credits; balance now ${credits(change.account.balance_micros)} credits.`);
        if (change.entry) console.log(`Ledger entry ${change.entry.id} (request ${orDash(change.entry.request_id)}).`);
      }
      return 0;
    }
    case 'ledger': {
      const cmd = parseCommand(rest, { limit: { type: 'string' }, after: { type: 'string' } }, ['ID'], 'accounts ledger ID [--limit N] [--after ENTRY]');
      const limit = (cmd.values.limit as string | undefined) ?? '20';
      const after = cmd.values.after as string | undefined;
      // Mistakes on the command line, told as such (exit status 2), not left for the server to refuse.
      if (!/^[1-9]\d{0,8}$/.test(limit) || Number(limit) > MAX_LEDGER_LIMIT) {
        throw new UsageError(`--limit must be a whole number of entries from 1 to ${MAX_LEDGER_LIMIT}, such as 50 (got "${limit}")`);
      }
      if (after !== undefined && !/^le_[0-9a-f]{32}$/.test(after)) throw new UsageError(`--after must be a ledger entry id, le_ and 32 hex digits, as the previous page ends with (got "${after}")`);
      const query = `limit=${limit}${after === undefined ? '' : `&after=${after}`}`;
      const ledger = await cmd.client().get<LedgerListView>(`/accounts/${seg(cmd.positionals[0]!)}/ledger?${query}`);
      if (cmd.json) printJson(ledger);
      else {
        console.log(`Account ${ledger.account_id}: balance ${credits(ledger.balance_micros)} credits.`);
        if (ledger.data.length === 0) console.log('No ledger entries.');
        else {
          const rows = ledger.data.map((e) => [time(e.created_at), e.kind, credits(e.amount_micros), orDash(e.request_id), orDash(e.api_key_id), orDash(e.note)]);
          console.log(table(['TIME', 'KIND', 'AMOUNT', 'REQUEST', 'KEY', 'NOTE'], rows, ['AMOUNT']));
          // The table has no column for entry ids: the one to read on from is given here.
          if (ledger.has_more) console.log(`(older entries follow: add --after ${ledger.last_id} for the next page)`);
        }
      }
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? 'accounts needs a command: list, show, create, set-tier, set-name, topup, adjust, ledger' : `unknown accounts command "${sub}"`);
  }
}
