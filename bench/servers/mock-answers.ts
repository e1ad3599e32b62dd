/**
 * What the benchmark's upstream answers (mock-upstream.ts), apart so that the relay's
 * micro-benchmark (bench/relay.bench.ts) reads the very stream the matrix relays.
 */
const WORDS = 'The quick brown fox jumps over the lazy dog while the gateway relays every token without delay ok'.split(' ');
const created = Math.floor(Date.now() / 1000);
const head = `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":${created},"model":"bench-upstream"`;
const usage = `{"prompt_tokens":12,"completion_tokens":${WORDS.length},"total_tokens":${12 + WORDS.length}}`;

export const completion = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created,
  model: 'bench-upstream',
  choices: [{ index: 0, message: { role: 'assistant', content: WORDS.join(' '), refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: JSON.parse(usage) as unknown,
  system_fingerprint: 'fp_bench',
});

export function streamBody(includeUsage: boolean): string {
  const u = includeUsage ? ',"usage":null' : '';
  let out = `data: ${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]${u}}\n\n`;
  for (const [i, word] of WORDS.entries()) {
    out += `data: ${head},"choices":[{"index":0,"delta":{"content":${JSON.stringify(i === 0 ? word : ` ${word}`)}},"logprobs":null,"finish_reason":null}]${u}}\n\n`;
  }
  out += `data: ${head},"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]${u}}\n\n`;
  if (includeUsage) out += `data: ${head},"choices":[],"usage":${usage}}\n\n`;
  return `${out}data: [DONE]\n\n`;
}
