/** One page of a newest-first list, as the stores read it. */
export interface Page {
  limit: number;
  /** Return items with ids below this one (lists are newest first). */
  before?: string;
}
