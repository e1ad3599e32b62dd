/** Reads a whole SSE response into its `data:` payloads, for tests that look at raw frames. */
export async function readSseData(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .map((event) => event.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n'))
    .filter((data) => data !== '');
}
