import type { FastifyInstance } from 'fastify';
import type { Dashboard } from './routes.ts';

export function manifestPages(_app: FastifyInstance, _d: Dashboard): void {}
