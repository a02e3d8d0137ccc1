// One HTTP attempt of one delivery, and what its answer means for the delivery and the webhook.
import { request } from 'undici';
import { OutboundRefused, resolveTarget, type OutboundPolicy, type PinnedAgents } from './outbound.ts';

export interface AttemptOutcome {
  /** The HTTP status answered; null when no answer came (refused, unreachable, timeout). */
  status: number | null;
  error: string | null;
  /** From `Retry-After` on 429 and 503. */
  retryAfterMs: number | null;
  durationMs: number;
}

const MAX_RETRY_AFTER_MS = 24 * 3600 * 1000;
// The receiver's body is read (so the connection can be reused) but not kept beyond this.
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendOptions {
  agents: PinnedAgents;
  policy: OutboundPolicy;
  timeoutMs: number;
  userAgent: string;
}

export async function sendOnce(options: SendOptions, url: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome> {
  const started = performance.now();
  const signal = AbortSignal.timeout(options.timeoutMs);
  const done = (status: number | null, error: string | null, retryAfterMs: number | null = null): AttemptOutcome => ({
    status,
    error,
    retryAfterMs,
    durationMs: Math.round(performance.now() - started),
  });
  try {
    const target = await resolveTarget(url, options.policy, signal);
    const res = await request(target.url, {
      method: 'POST',
      dispatcher: options.agents.for(target),
      signal,
      headers: { 'content-type': 'application/json', 'user-agent': options.userAgent, ...headers },
      body,
    });
    await res.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => {});
    const status = res.statusCode;
    if (status >= 200 && status < 300) return done(status, null);
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after']) : null;
    if (status >= 300 && status < 400) {
      const location = String(res.headers.location ?? '').slice(0, 200);
      return done(status, `redirects are not followed (${status}${location ? ` to ${location}` : ''})`);
    }
    if (status === 410) return done(status, '410 Gone: the webhook was disabled');
    return done(status, `HTTP ${status}${retryAfterMs !== null ? `, Retry-After ${Math.round(retryAfterMs / 1000)} s` : ''}`, retryAfterMs);
  } catch (err) {
    return done(null, describe(err, signal, options.timeoutMs));
  }
}

function describe(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (err instanceof OutboundRefused) return err.message;
  const e = err as { code?: string; message?: string; name?: string };
  if (signal.aborted || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `timed out after ${timeoutMs} ms`;
  }
  if (e.code === 'ECONNREFUSED') return 'connection refused';
  if (e.code === 'ECONNRESET' || e.code === 'UND_ERR_SOCKET') return 'connection closed before the response';
  return `${e.code ?? e.name ?? 'error'}: ${e.message ?? String(err)}`.slice(0, 500);
}

/** `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 §10.2.3), capped at 24 h; null if absent or malformed. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  const trimmed = text.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    // HTTP-date in any of its three forms starts with a day name.
    if (!/^[A-Za-z]/.test(trimmed)) return null;
    const at = Date.parse(trimmed);
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

export type Verdict =
  | { status: 'succeeded' }
  | { status: 'failed'; reason: 'gone' | 'exhausted' }
  | { status: 'pending'; delayMs: number };

/**
 * What happens after attempt number `attempt` (1-based) of the current run: 2xx succeeds; 410 fails
 * for good (and disables the webhook); anything else retries after the schedule's delay for this
 * attempt with ±10 % jitter, or later if `Retry-After` asks for it, until the schedule is used up.
 */
export function verdict(outcome: AttemptOutcome, attempt: number, schedule: number[], random = Math.random): Verdict {
  const s = outcome.status;
  if (s !== null && s >= 200 && s < 300) return { status: 'succeeded' };
  if (s === 410) return { status: 'failed', reason: 'gone' };
  if (attempt > schedule.length) return { status: 'failed', reason: 'exhausted' };
  const jittered = schedule[attempt - 1]! * 1000 * (0.9 + 0.2 * random());
  return { status: 'pending', delayMs: Math.round(Math.max(jittered, outcome.retryAfterMs ?? 0)) };
}
