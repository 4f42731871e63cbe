// GET /docs: the interactive API reference. The page is Scalar's standalone bundle (@scalar/api-reference, an npm
// dependency) served by the service itself, pointed at its own /openapi.json. Nothing is fetched from any other
// origin: no CDN, no fonts, no proxy, no telemetry, no AI agent; the Content-Security-Policy enforces it.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';
import { precompressed } from '../../platform/http/precompressed.js';
import { ApiError } from '../../platform/errors/api-error.js';
import { API_BASE_PATH, apiDocument } from '../../platform/spec.js';

const SCALAR_PACKAGE = '@scalar/api-reference';

/** The installed bundle, read once at start: its version names the script's URL. */
export const scalarBundle = loadScalarBundle();

/** Where the page loads its script from; the version in the path lets browsers keep it for good. */
export const apiReferenceScriptPath = `${API_BASE_PATH}/docs/scalar/${scalarBundle.version}/api-reference.js`;

/**
 * Scalar reads this from the `data-configuration` attribute, so the page needs no inline script.
 * - withDefaultFonts false: otherwise it loads Inter and JetBrains Mono from fonts.scalar.com (the system's fonts serve).
 * - agent and mcp disabled: the "Ask AI" agent switches itself on for localhost and talks to api.scalar.com.
 * - showDeveloperTools never: the toolbar offers sharing through registry.scalar.com.
 * - servers: requests tried from the page go to this deployment (the page's own origin), which is also all the
 *   policy lets it reach; the document's other servers are other deployments with other keys.
 * - no proxyUrl: requests go straight to the origin, never through proxy.scalar.com; telemetry off.
 * - persistAuth false: a key typed into the page is not kept in the browser's storage.
 * - hiddenClients true: Scalar's generic clients (fetch, axios, Python, ...) are hidden; each operation shows the
 *   samples the description carries (x-codeSamples: curl and the SDK, scripts/lib/code-samples.ts) instead.
 */
const scalarConfiguration = {
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: 'never',
  servers: [{ url: API_BASE_PATH, description: 'This deployment' }],
  persistAuth: false,
  hiddenClients: true,
};

/**
 * Only this origin, for everything. Two relaxations, neither for scripts:
 * - style-src 'unsafe-inline': the bundle injects its CSS as <style> elements at run time (Tailwind, the toast
 *   library, the code editor), some without a nonce, and Vue sets style attributes; without it the page renders
 *   unstyled. Inline styles cannot run code.
 * - img-src data:: the page's empty favicon (so the browser asks for no /favicon.ico) and any image Scalar inlines.
 * script-src is 'self' alone: the configuration is a data attribute, not an inline script. The bundle's validation
 * library (Zod) probes for eval with Function('') inside a try/catch and falls back to plain code when refused, so
 * the one report a browser makes under this policy (script-src, "eval") is harmless and 'unsafe-eval' is not given.
 */
export const API_REFERENCE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Both compressed once, with their ETags (see precompressed.ts): the script is 4 MB. */
const page = precompressed(renderPage(), 'text/html; charset=utf-8');
const script = precompressed(scalarBundle.script, 'text/javascript; charset=utf-8');

export const apiReferencePage: RequestHandler = async (req, res) => {
  res.setHeader('Content-Security-Policy', API_REFERENCE_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  // The page names the script's version: revalidate it so an upgrade reaches the browser at once.
  res.setHeader('Cache-Control', 'no-cache');
  await page.send(req, res);
};

export const apiReferenceScript: RequestHandler = async (req, res) => {
  if (req.params.version !== scalarBundle.version) {
    throw new ApiError(
      'not_found',
      `This service serves the API reference script version ${scalarBundle.version} only: GET ${apiReferenceScriptPath}.`,
    );
  }
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
  await script.send(req, res);
};

function renderPage(): string {
  const title = `${apiDocument.info.title} ${apiDocument.info.version}: API reference`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>This reference needs JavaScript. The description itself is at <a href="${API_BASE_PATH}/openapi.json">${API_BASE_PATH}/openapi.json</a>.</noscript>
<script id="api-reference" data-url="${API_BASE_PATH}/openapi.json" data-configuration="${escapeHtml(JSON.stringify(scalarConfiguration))}"></script>
<script src="${apiReferenceScriptPath}"></script>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * The package exports no path to its browser bundle, so it is found next to the package's main entry
 * (dist/index.js -> dist/browser/standalone.js). A missing file fails the start, not the first visitor.
 */
function loadScalarBundle(): { version: string; script: Buffer } {
  const entry = import.meta.resolve(SCALAR_PACKAGE);
  const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../package.json', entry)), 'utf8')) as {
    name?: string;
    version?: string;
  };
  if (manifest.name !== SCALAR_PACKAGE || !manifest.version) {
    throw new Error(
      `${SCALAR_PACKAGE}: expected its package.json one level above ${entry}; the package layout changed.`,
    );
  }
  return { version: manifest.version, script: readFileSync(fileURLToPath(new URL('browser/standalone.js', entry))) };
}
