import type { FastifyInstance } from 'fastify';
import type { Dashboard } from './routes.ts';

export function shipmentPages(_app: FastifyInstance, _d: Dashboard): void {}
