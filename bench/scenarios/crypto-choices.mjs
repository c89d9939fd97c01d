// The crypto pool's choices (DESIGN §2): argon2id through the pool vs direct, HS256 inline, the pool's
// own round trip. bench/crypto-choices.mjs does the measuring; this runs it and keeps its numbers with
// the rest of the results. Not in the default run (`npm run bench -- crypto-choices`): it needs no
// service and takes about 9 × BENCH_DURATION seconds (rounded to whole seconds, at least one).
import { spawn } from 'node:child_process';

export async function cryptoChoices(options) {
  const script = new URL('../crypto-choices.mjs', import.meta.url).pathname;
  const child = spawn(process.execPath, [script, String(Math.max(1, Math.round(options.duration))), '--json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  const code = await new Promise((resolve) => child.on('close', resolve));
  const lines = output.trim().split('\n');
  for (const line of lines.slice(0, -1)) console.log(`  crypto-choices  ${line.trim()}`);
  if (code !== 0) return { error: `bench/crypto-choices.mjs exited with ${code}` };
  return { measured: JSON.parse(lines[lines.length - 1]) };
}
