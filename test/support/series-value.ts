/** The value of one series line of a Prometheus text exposition, by its exact name and labels. */
export function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
