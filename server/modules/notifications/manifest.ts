// Notifications: a member's in-app notifications over REST (written by the platform's notify(), read per member).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { notificationRoutes } from './routes.js';

export const notificationsModule: ModuleManifest = {
  name: 'notifications',
  routes: ({ db }) => notificationRoutes(db),
};
