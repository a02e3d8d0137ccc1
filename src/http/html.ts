// HTML-escaping for every page the service writes (the API reference, the consent pages, the dashboard).

/** Text made safe inside element content and quoted attributes. */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
