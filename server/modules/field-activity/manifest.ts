// Field activity: salespeople's visits, outlet activities and competitor observations (with photos), read-only
// over HTTP; recorded by the posting functions of service.ts (operator CLI, sandbox).
import type { ModuleManifest } from '../../platform/modules/manifest.js';
import { photoUrlSigner } from './photos.js';
import { fieldActivityRoutes } from './routes.js';

export const fieldActivityModule: ModuleManifest = {
  name: 'field-activity',
  routes: ({ db, config, publicBaseUrl }) =>
    fieldActivityRoutes(db, photoUrlSigner(config.cursorSecret), publicBaseUrl),
};
