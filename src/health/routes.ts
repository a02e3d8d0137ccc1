import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { AppContext } from '../context.ts';

const healthSchema = {
  type: 'object',
  required: ['status', 'version'],
  properties: { status: { type: 'string', enum: ['ok', 'unavailable'] }, version: { type: 'string' } },
} as const;

export function healthRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/health', {
    config: { public: true },
    schema: { tags: ['service'], operationId: 'getHealth', summary: 'Service health and release version', description: '`ok` (200) when the database answers, `unavailable` (503) otherwise; with the release version.', response: { 200: healthSchema, 503: healthSchema } },
    handler: async (_request, reply) => {
      try {
        await sql`select 1`.execute(ctx.db);
        return { status: 'ok', version: ctx.config.version };
      } catch (err) {
        ctx.log.warn({ err }, 'health check: database does not answer');
        return reply.code(503).send({ status: 'unavailable', version: ctx.config.version });
      }
    },
  });

}
