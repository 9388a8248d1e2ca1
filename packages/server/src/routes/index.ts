// The route index: every route plugin of /api/v1, each given the services it declares.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../services.js';
import { apiKeyRoutes } from './api-keys.js';
import { authRoutes } from './auth.js';
import { complianceRoutes } from './compliance.js';
import { reportRoutes } from './reports.js';
import { exportRoutes } from './exports.js';
import { forensicsRoutes } from './forensics.js';
import { healthRoutes } from './health.js';
import { hitlRoutes } from './hitl.js';
import { approvalRoutes } from './approvals.js';
import { incidentRoutes } from './incidents.js';
import { policyRoutes } from './policies.js';
import { integrityRoutes } from './integrity.js';
import { keyRoutes } from './keys.js';
import { logRoutes } from './logs.js';
import { metricsRoutes } from './metrics.js';
import { otlpRoutes } from './otlp.js';
import { usageRoutes } from './usage.js';
import { userRoutes } from './users.js';
import { webhookRoutes } from './webhooks.js';
import { streamRoutes } from './streams.js';
import { tlogRoutes } from './tlog.js';
import { agentKeyRoutes } from './agent-keys.js';

/** In the order they appear in the OpenAPI document. */
export const ROUTES: ReadonlyArray<(services: Services) => FastifyPluginAsyncTypebox> = [
  authRoutes,
  apiKeyRoutes,
  userRoutes,
  logRoutes,
  otlpRoutes,
  integrityRoutes,
  keyRoutes,
  agentKeyRoutes,
  tlogRoutes,
  exportRoutes,
  forensicsRoutes,
  hitlRoutes,
  approvalRoutes,
  policyRoutes,
  incidentRoutes,
  healthRoutes,
  metricsRoutes,
  usageRoutes,
  webhookRoutes,
  streamRoutes,
  complianceRoutes,
  reportRoutes,
];
