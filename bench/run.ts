// `npm run bench [-- <name>…]`: runs every benchmark module (bench/*.bench.ts, plus bench/render.ts),
// each in its own process so one cannot skew another's memory or JIT state, prints the markdown
// sections and writes them to bench/out/latest.md (and bench/out/<name>.md) for docs/benchmarks.md.
// Each module exports `async function run(): Promise<string>` returning its markdown section.
// `--against <rev>` (or `--against=<rev>`) names another git revision for the benchmarks that compare
// with one (day, addresses); it reaches them as the environment variable BENCH_AGAINST.
import { fork } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { machine, OUT_DIR, SECONDS, WARMUP_SECONDS } from './lib.ts';

const benchDir = new URL('./', import.meta.url);

function modules(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of readdirSync(benchDir).sort()) {
    if (file.endsWith('.bench.ts')) found.set(basename(file, '.bench.ts'), new URL(file, benchDir).pathname);
  }
  if (existsSync(new URL('render.ts', benchDir))) found.set('render', new URL('render.ts', benchDir).pathname);
  return found;
}

/** In the child: run one module and hand its section back to the parent. */
async function runOne(path: string): Promise<void> {
  const mod = (await import(path)) as { run?: () => Promise<string> };
  if (typeof mod.run !== 'function') throw new Error(`${path} does not export run()`);
  const section = await mod.run();
  await new Promise<void>((resolve) => process.send!({ section }, () => resolve()));
}

function runInChild(name: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ['--module', path], { execArgv: ['--disable-warning=ExperimentalWarning'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let section: string | undefined;
    child.on('message', (m: { section?: string }) => (section = m.section));
    child.on('exit', (code) => (section !== undefined && code === 0 ? resolve(section) : reject(new Error(`benchmark ${name} failed (exit code ${code})`))));
  });
}

async function main(): Promise<number> {
  const moduleArg = process.argv.indexOf('--module');
  if (moduleArg >= 0) {
    await runOne(process.argv[moduleArg + 1]!);
    return 0;
  }
  const all = modules();
  const args = process.argv.slice(2);
  const names: string[] = [];
  let against = process.env.BENCH_AGAINST || undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--against') {
      against = args[++i];
      if (!against || against.startsWith('-')) {
        console.error('--against needs a git revision, e.g. --against bfb4cd2');
        return 2;
      }
    } else if (a.startsWith('--against=')) against = a.slice('--against='.length);
    else names.push(a);
  }
  // The children inherit it (fork passes process.env).
  if (against) process.env.BENCH_AGAINST = against;
  const wanted = names.filter((a) => !a.startsWith('-'));
  const unknown = wanted.filter((n) => !all.has(n));
  if (unknown.length) {
    console.error(`unknown benchmark ${unknown.join(', ')}; available: ${[...all.keys()].join(', ')}`);
    return 2;
  }
  const selected = wanted.length ? wanted : [...all.keys()];
  const commandArgs = [...wanted, ...(against ? ['--against', against] : [])];
  const command = `npm run bench${commandArgs.length ? ` -- ${commandArgs.join(' ')}` : ''}`;
  // Other benchmark settings given in the environment (e.g. BENCH_DAY_SECONDS), so the header says how it ran.
  const otherSettings = Object.entries(process.env)
    .filter(([k, v]) => k.startsWith('BENCH_') && v !== undefined && !['BENCH_SECONDS', 'BENCH_WARMUP', 'BENCH_AGAINST'].includes(k))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}=${v}`);
  const header = [
    `# Benchmark run ${new Date().toISOString()}`,
    '',
    `Command: \`${command}\` (${[`BENCH_SECONDS=${SECONDS}`, `BENCH_WARMUP=${WARMUP_SECONDS}`, ...otherSettings].join(', ')})`,
    '',
    `Machine: ${machine()}`,
    '',
  ].join('\n');
  process.stdout.write(`${header}\n`);
  mkdirSync(OUT_DIR, { recursive: true });

  const sections: string[] = [];
  let failed = 0;
  for (const name of selected) {
    process.stderr.write(`\n▶ ${name}\n`);
    let section: string;
    try {
      section = await runInChild(name, all.get(name)!);
    } catch (err) {
      failed++;
      section = `## ${name}\n\nFailed: ${(err as Error).message}\n`;
    }
    sections.push(section);
    process.stdout.write(`\n${section}\n`);
    writeFileSync(new URL(`${name}.md`, OUT_DIR), `${header}\n${section}\n`);
  }
  writeFileSync(new URL('latest.md', OUT_DIR), `${header}\n${sections.join('\n\n')}\n`);
  process.stderr.write(`\nwritten to bench/out/latest.md\n`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
