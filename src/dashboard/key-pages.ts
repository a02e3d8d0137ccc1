import type { FastifyInstance } from 'fastify';
import type { Dashboard } from './routes.ts';

export function keyPages(_app: FastifyInstance, _d: Dashboard): void {}
