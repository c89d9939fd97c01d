// The operator's configuration files, read as the original reads them so that its command line
// (`serve -c FILE -d DIR`) works unchanged: `-c` names one file, `-d` a directory whose .env and .json
// files are layered in name order. Only reading and ordering lives here; precedence is load.ts's.
import fs from 'node:fs';
import path from 'node:path';
import { DotenvSyntaxError, parseDotenv } from './dotenv.js';

export type Vars = Record<string, string | undefined>;

/** One source of variables; `label` names it in messages (null: the process environment). */
export interface Layer {
  label: string | null;
  vars: Vars;
}

/** A file or directory that cannot be read or parsed; the message names it and says what is wrong. */
export class ConfigFileError extends Error {}

/**
 * Reads one file: JSON when its name ends in .json, dotenv syntax otherwise (as the original decides; a
 * file named just `.json` is JSON too, where Node's extname would see no extension).
 */
export function readConfigFile(file: string): Vars {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigFileError(`${file}: ${reason(err)}`);
  }
  return path.basename(file).endsWith('.json') ? parseJson(file, text) : parseDotenvFile(file, text);
}

function parseDotenvFile(file: string, text: string): Vars {
  try {
    return parseDotenv(text);
  } catch (err) {
    if (err instanceof DotenvSyntaxError) throw new ConfigFileError(`${file}: ${err.message}`);
    throw err;
  }
}

/**
 * A JSON file is one object of variable names. The original accepts only string values; numbers and
 * booleans are taken as their text here, since tools that write JSON often type them. null leaves the
 * variable unset. Anything nested is refused: no setting could read it.
 */
function parseJson(file: string, text: string): Vars {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigFileError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new ConfigFileError(`${file}: must be a JSON object of variable names and values`);
  const vars: Vars = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (value === null) continue;
    if (typeof value === 'object') throw new ConfigFileError(`${file}: ${name} must be a string, number or boolean`);
    vars[name] = String(value);
  }
  return vars;
}

/**
 * The files of a config directory in the order they are applied, later ones overriding earlier ones:
 * every .env and .json file (not subdirectories, not other names) sorted by name, bytewise as Go sorts.
 * When `X.env` is directly followed by `X.json`, only the JSON one is read: the pair is one file in two
 * formats, and the original lets the JSON replace the .env rather than layer over it.
 */
export function configDirFiles(dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    throw new ConfigFileError(`${dir}: ${reason(err)}`);
  }
  const names = entries
    // By suffix, not path.extname: a file named just `.env` is read, as the original sees `.env` as its extension.
    .filter((e) => !e.isDirectory() && (e.name.endsWith('.env') || e.name.endsWith('.json')))
    .map((e) => e.name)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const chosen: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const name = names[i];
    const pairedJson = name.endsWith('.env') && names[i + 1] === `${name.slice(0, -4)}.json`;
    if (pairedJson) i++;
    chosen.push(path.join(dir, pairedJson ? names[i] : name));
  }
  return chosen;
}

/** Every file of the directory as a layer, lowest precedence first. */
export function readConfigDir(dir: string): Layer[] {
  return configDirFiles(dir).map((file) => ({ label: file, vars: readConfigFile(file) }));
}

function reason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory, not a file';
  if (code === 'ENOTDIR') return 'is not a directory';
  return (err as Error).message;
}
