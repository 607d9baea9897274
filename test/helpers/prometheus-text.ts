/** @module Reads a scrape with a real Prometheus text-format parser (parse-prometheus-text-format), as a scraper would. */
import parsePrometheusTextFormat from "parse-prometheus-text-format";

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Every sample by its name (`hooks_requests_total`, `..._bucket`, `..._sum`, `..._count`), and each family's type. */
export interface Scrape {
  types: Map<string, string>;
  samples: Map<string, Sample[]>;
}

/**
 * Throws on any line the parser rejects. The parser folds a histogram's labelled series into one (it only keeps
 * unlabelled histograms apart), so histograms are read a second time with their TYPE lines left out: each
 * `_bucket`, `_sum` and `_count` line is then a sample of its own, labels and all.
 */
export function parseMetrics(text: string): Scrape {
  const families = parsePrometheusTextFormat(text);
  const types = new Map(families.map((family) => [family.name, family.type]));
  const untyped = text
    .split("\n")
    .filter((line) => !/^# TYPE \S+ histogram$/.test(line))
    .join("\n");
  const samples = new Map<string, Sample[]>();
  // Untyped, a histogram's lines come back as one family per run of same-named lines: they are gathered by name.
  for (const family of parsePrometheusTextFormat(untyped)) {
    const read = family.metrics.map((metric) => ({
      labels: metric.labels ?? {},
      value: Number(metric.value),
    }));
    samples.set(family.name, [...(samples.get(family.name) ?? []), ...read]);
  }
  return { types, samples };
}

export function samplesOf(scrape: Scrape, name: string): Sample[] {
  return scrape.samples.get(name) ?? [];
}

/** The value of the one sample whose labels are exactly `labels`; undefined when there is none. */
export function sampleValue(
  scrape: Scrape,
  name: string,
  labels: Record<string, string>,
): number | undefined {
  const wanted = Object.entries(labels);
  const found = samplesOf(scrape, name).filter(
    (sample) =>
      Object.keys(sample.labels).length === wanted.length &&
      wanted.every(([key, value]) => sample.labels[key] === value),
  );
  if (found.length > 1) throw new Error(`${name}: more than one sample with ${JSON.stringify(labels)}`);
  return found[0]?.value;
}
