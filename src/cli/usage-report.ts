/** `tollgate usage [--account A] [--key K] [--model M] [--from DAY] [--to DAY]`: usage per day, account, key and model. */
import type { UsageView } from '../admin/views.js';
import { parseCommand } from './admin-client.js';
import { credits, printJson, table } from './output.js';

export const USAGE_HELP = `  usage [--account A] [--key K] [--model M] [--from DAY] [--to DAY]
                                        Requests, tokens and cost per UTC day, account,
                                        key and model, with totals; DAY is YYYY-MM-DD,
                                        both ends included.`;

export async function usage(argv: string[]): Promise<number> {
  const filters = ['account', 'key', 'model', 'from', 'to'] as const;
  const cmd = parseCommand(argv, Object.fromEntries(filters.map((f) => [f, { type: 'string' }])), [], 'usage [--account A] [--key K] [--model M] [--from DAY] [--to DAY]');
  const query = new URLSearchParams();
  for (const f of filters) {
    const value = cmd.values[f];
    if (typeof value === 'string') query.set(f, f === 'key' ? value.replace(/^sk-tg-([A-Za-z0-9]{12}).*$/, '$1') : value);
  }
  const text = query.toString();
  const report = await cmd.client().get<UsageView>(`/usage${text === '' ? '' : `?${text}`}`);
  if (cmd.json) {
    printJson(report);
    return 0;
  }
  if (report.data.length === 0) {
    console.log('No usage recorded for these filters.');
    return 0;
  }
  const n = (v: number) => v.toLocaleString('en-US');
  const rows = report.data.map((r) => [r.day, r.account_id, r.api_key_id, r.model, n(r.requests), n(r.prompt_tokens), n(r.completion_tokens), credits(r.cost_micros)]);
  const t = report.totals;
  rows.push(['total', '', '', '', n(t.requests), n(t.prompt_tokens), n(t.completion_tokens), credits(t.cost_micros)]);
  console.log(table(['DAY', 'ACCOUNT', 'KEY', 'MODEL', 'REQUESTS', 'PROMPT', 'COMPLETION', 'COST'], rows, ['REQUESTS', 'PROMPT', 'COMPLETION', 'COST']));
  return 0;
}
