// Tracking lookups are what users look at most, and a label's history changes only when events come
// in for it. Every transaction that stores events for a label adds one to its `events_version`
// (label_tracking), read by the lookup in the same query as the label itself, so an answer built for
// one version is the answer for every later lookup that reads the same version, in any process: no
// invalidation message is needed, and a write by another process shows at once. The lookup still
// reads the label on every request (account check, version); only the events query and the JSON are
// reused.

/** Characters of JSON kept at most (about 2 bytes each): an answer of 100 events is about 20,000. */
export const DEFAULT_MAX_CHARS = 16 * 1024 * 1024;
/** Distinct queries remembered per label. */
const MAX_ANSWERS_PER_LABEL = 8;

interface LabelAnswers {
  version: number;
  answers: Map<string, string>;
  chars: number;
}

export class TrackingResponses {
  readonly #labels = new Map<string, LabelAnswers>();
  readonly #maxChars: number;
  #chars = 0;

  constructor(maxChars = DEFAULT_MAX_CHARS) {
    this.#maxChars = maxChars;
  }

  /** The JSON built for this label, version and query, if any. */
  get(labelId: string, version: number, query: string): string | undefined {
    const entry = this.#labels.get(labelId);
    return entry?.version === version ? entry.answers.get(query) : undefined;
  }

  set(labelId: string, version: number, query: string, json: string): void {
    if (json.length > this.#maxChars / 16) return;
    let entry = this.#labels.get(labelId);
    if (entry && entry.version > version) return;
    if (!entry || entry.version < version || entry.answers.size >= MAX_ANSWERS_PER_LABEL) {
      if (entry) this.#drop(labelId, entry);
      entry = { version, answers: new Map(), chars: 0 };
      this.#labels.set(labelId, entry);
    }
    const previous = entry.answers.get(query);
    if (previous !== undefined) {
      entry.chars -= previous.length;
      this.#chars -= previous.length;
    }
    entry.answers.set(query, json);
    entry.chars += json.length;
    this.#chars += json.length;
    // Oldest label first out (a Map iterates in insertion order), never the one just stored.
    for (const [id, oldest] of this.#labels) {
      if (this.#chars <= this.#maxChars || id === labelId) break;
      this.#drop(id, oldest);
    }
  }

  #drop(labelId: string, entry: LabelAnswers): void {
    this.#labels.delete(labelId);
    this.#chars -= entry.chars;
  }

  /** Characters of JSON held now. */
  get chars(): number {
    return this.#chars;
  }
}
