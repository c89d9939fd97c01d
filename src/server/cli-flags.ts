// The original's global flags, taken out of the command line before the command is chosen: its image is
// run as `auth serve --config FILE` or `auth -c FILE serve`, and an operator swapping in this container
// keeps that command line. Every spelling its flag parser accepts is accepted: `-c FILE`, `-cFILE`,
// `-c=FILE`, `--config FILE`, `--config=FILE`, the same for `-d/--config-dir`, before or after the command.

export interface ParsedCommandLine {
  command: string | undefined;
  args: string[];
  configFile: string | null;
  configDir: string | null;
}

// The original's program names. Its image runs `auth` (also linked as `gotrue`), so a deployment that
// overrides the command says `auth migrate` or `gotrue serve`; behind this image's entrypoint that
// arrives as the first argument, and names no command of its own.
const PROGRAM_NAMES = new Set(['auth', 'gotrue']);

const FLAGS: Record<string, 'configFile' | 'configDir'> = {
  '-c': 'configFile',
  '--config': 'configFile',
  '-d': 'configDir',
  '--config-dir': 'configDir',
};

/** Splits the global flags from the rest; a flag without its value is an Error (a usage error). */
export function parseCommandLine(argv: string[]): ParsedCommandLine | Error {
  const parsed: ParsedCommandLine = { command: undefined, args: [], configFile: null, configDir: null };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const long = arg.startsWith('--');
    // The flag's name, and its value when given in the same argument (`--config=F`, `-cF`, `-c=F`).
    const name = long ? arg.split('=', 1)[0] : arg.slice(0, 2);
    if (!(name in FLAGS)) {
      rest.push(arg);
      continue;
    }
    const attached = long ? (arg.includes('=') ? arg.slice(name.length + 1) : null) : arg.slice(2).replace(/^=/, '') || null;
    const value = attached ?? argv[++i];
    if (value === undefined || value === '') return new Error(`${name} needs a value`);
    parsed[FLAGS[name]] = value;
  }
  if (PROGRAM_NAMES.has(rest[0])) rest.shift();
  parsed.command = rest[0];
  parsed.args = rest.slice(1);
  return parsed;
}
