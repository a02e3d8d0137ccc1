// `Location` on what a request created (RFC 9110 §10.2.2): the new resource's own address under the
// API's base URL, so a client need not build it. A route says which collection it adds to
// (`config.creates`); the id comes from the answer, so a replayed answer (src/http/idempotency.ts)
// carries the same header.
import type { FastifyContextConfig, FastifyInstance, onSendHookHandler } from 'fastify';

export function installLocations(app: FastifyInstance, baseUrl: string): void {
  app.addHook('onRoute', (route) => {
    const collection = (route.config as FastifyContextConfig | undefined)?.creates;
    if (!collection) return;
    const locate: onSendHookHandler = (_request, reply, payload, done) => {
      if ((reply.statusCode === 201 || reply.statusCode === 202) && typeof payload === 'string') {
        const id = (JSON.parse(payload) as { id?: unknown }).id;
        if (typeof id === 'string') reply.header('location', `${baseUrl}/${collection}/${id}`);
      }
      done(null, payload);
    };
    route.onSend = route.onSend === undefined ? [locate] : [...[route.onSend].flat(), locate];
  });
}
