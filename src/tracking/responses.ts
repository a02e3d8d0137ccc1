// Tracking lookups are what users look at most, and a label's history changes only when events come
// in for it. Every transaction that stores events for a label adds one to its `events_version`
// (label_tracking), read by the lookup in the same query as the label itself, so an answer built for
// one version is the answer for every later lookup that reads the same version, in any process: no
// invalidation message is needed, and a write by another process shows at once. The lookup still
// reads the label on every request (account check, version); only the events query and the JSON are
// reused.

/** Labels remembered at most; each holds the answers to a few distinct queries. */
const MAX_LABELS = 10_000;
const MAX_ANSWERS_PER_LABEL = 16;

export class TrackingResponses {
  readonly #labels = new Map<string, { version: number; answers: Map<string, string> }>();

  /** The JSON built for this label, version and query, if any. */
  get(labelId: string, version: number, query: string): string | undefined {
    const entry = this.#labels.get(labelId);
    return entry?.version === version ? entry.answers.get(query) : undefined;
  }

  set(labelId: string, version: number, query: string, json: string): void {
    let entry = this.#labels.get(labelId);
    if (!entry || entry.version < version) {
      // Oldest first out: a Map iterates in insertion order.
      if (!entry && this.#labels.size >= MAX_LABELS) this.#labels.delete(this.#labels.keys().next().value!);
      entry = { version, answers: new Map() };
      this.#labels.set(labelId, entry);
    } else if (entry.version > version) {
      return;
    }
    if (entry.answers.size >= MAX_ANSWERS_PER_LABEL) entry.answers.clear();
    entry.answers.set(query, json);
  }

  get size(): number {
    return this.#labels.size;
  }
}
