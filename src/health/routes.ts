import type { FastifyInstance } from 'fastify';
import { schemaPresent } from '../db/index.ts';
import type { AppContext } from '../context.ts';

const healthSchema = {
  type: 'object',
  required: ['status', 'version'],
  properties: { status: { type: 'string', enum: ['ok', 'unavailable'] }, version: { type: 'string' } },
} as const;

/**
 * The longest the health check waits for the database: a load balancer's probe gives up after a few
 * seconds, and a database that has not answered by then is not healthy, whatever DATABASE_TIMEOUT_MS
 * allows a request.
 */
export const HEALTH_CHECK_MS = 2000;

export function healthRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/health', {
    config: { public: true },
    schema: { tags: ['service'], operationId: 'getHealth', summary: 'Service health and release version', description: '`ok` (200) when the database answers within 2 s and holds the service\'s tables, `unavailable` (503) otherwise (the reason is logged); with the release version.', response: { 200: healthSchema, 503: healthSchema } },
    handler: async (_request, reply) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        const late = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the database did not answer within ${HEALTH_CHECK_MS} ms`)), HEALTH_CHECK_MS);
        });
        // The select goes on after a late answer; its own limits end it.
        if (!(await Promise.race([schemaPresent(ctx.db), late]))) {
          ctx.log.warn('health check: the database has none of the service\'s tables (recreated empty?); restart the service to migrate it');
          return reply.code(503).send({ status: 'unavailable', version: ctx.config.version });
        }
        return { status: 'ok', version: ctx.config.version };
      } catch (err) {
        ctx.log.warn({ err }, 'health check: database does not answer');
        return reply.code(503).send({ status: 'unavailable', version: ctx.config.version });
      } finally {
        clearTimeout(timer);
      }
    },
  });

}
