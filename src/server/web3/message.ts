// Sign-In with Solana / Sign-In with Ethereum (EIP-4361) messages, parsed line by line as the original
// parses them (docs/web3.md#the-message). Both chains share the layout; a chain's rules differ in the
// header, the address, the Chain ID, and whether an absent statement is "" (Solana) or null (Ethereum).
// The refusal texts are wire API: the grant answers them as 400 validation_failed messages.
import { parseTimestamp, ZERO_TIME } from '../go-time.js';
import { parseRequestUri, type RequestUri } from './request-uri.js';
import { goQuoted } from '../go-quoted.js';
import { trimSpace } from '../go-trim-space.js';

export interface ChainRules {
  /** the refusal prefix: "siws" or "siwe" */
  tag: string;
  header: string;
  address: RegExp;
  addressRefusal: string;
  /** whether a Chain ID line's value is acceptable ('' when the line is empty) */
  chainId: (value: string) => boolean;
  /** Ethereum keeps a year-1 Not Before / Expiration Time as given; Solana reads it as absent */
  zeroTimeIsAbsent: boolean;
  absentStatement: '' | null;
}

export interface SignInMessage {
  raw: string;
  domain: string;
  address: string;
  statement: string | null;
  uri: RequestUri;
  version: string;
  chainId: string;
  nonce: string;
  /** milliseconds since the epoch */
  issuedAt: number;
  expirationTime: number | null;
  notBefore: number | null;
  requestId: string | null;
  resources: RequestUri[];
}

/** A message the parser refuses; its text is the answer's msg. */
export class MessageRefusal extends Error {}

// "localhost" or dot-separated labels ending in a 2+ letter top-level label, with an optional port.
const DOMAIN = /^(localhost|(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,})(?::\d{1,5})?$/;

type Field = 'URI' | 'Version' | 'Chain ID' | 'Nonce' | 'Issued At' | 'Expiration Time' | 'Not Before' | 'Request ID';

export function parseMessage(raw: string, rules: ChainRules): SignInMessage {
  const refuse = (text: string) => new MessageRefusal(`${rules.tag}: ${text}`);
  const lines = raw.split('\n');
  if (lines.length < 6) throw refuse('message needs at least 6 lines');
  if (!lines[0].endsWith(rules.header)) throw refuse(`message first line does not end in "${rules.header}"`);
  const domain = trimSpace(lines[0].slice(0, -rules.header.length));
  if (!DOMAIN.test(domain)) throw refuse('domain in first line of message is not valid');
  const address = trimSpace(lines[1]);
  if (!rules.address.test(address)) throw refuse(rules.addressRefusal);
  if (lines[2] !== '') throw refuse('third line must be empty');

  // A statement is one line with an empty line after it; otherwise the fields start on the fourth line.
  const hasStatement = lines[3] !== '' && lines[4] === '';
  const fields = new Map<Field, string>();
  const resources: RequestUri[] = [];
  let inResources = false;
  for (let i = hasStatement ? 5 : 3; i < lines.length; i++) {
    const line = trimSpace(lines[i]);
    if (inResources) {
      if (line.startsWith('- ')) {
        const resource = parseRequestUri(trimSpace(line.slice(2)));
        if (!resource) throw refuse(`Resource at position ${resources.length} has invalid URI`);
        resources.push(resource);
        continue;
      }
      inResources = false;
    }
    if (line === 'Resources:') {
      inResources = true;
      continue;
    }
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon < 0) throw refuse(`encountered unparsable line at index ${i}`);
    const key = line.slice(0, colon);
    const value = trimSpace(line.slice(colon + 1));
    if (key === 'URI' && !parseRequestUri(value)) throw refuse('URI is not valid');
    if (key === 'Chain ID' && !rules.chainId(value)) throw refuse('Chain ID is not valid');
    if (key === 'Issued At' || key === 'Expiration Time' || key === 'Not Before') {
      if (parseTimestamp(value) === null) throw refuse(`${key} is not a valid ISO8601 timestamp`);
      // Ethereum refuses a year-1 Issued At as it reads the line (Solana only once all lines are read).
      if (key === 'Issued At' && !rules.zeroTimeIsAbsent && parseTimestamp(value) === ZERO_TIME) throw refuse('Issued At is not specified');
    }
    fields.set(key as Field, value);
  }

  const version = fields.get('Version') ?? '';
  if (version !== '1') throw refuse(`Version value is not supported, expected 1 got ${goQuoted(version)}`);
  const issuedAt = timeOf(fields.get('Issued At'), true);
  if (issuedAt === null) throw refuse('Issued At is not specified');
  const uriText = fields.get('URI');
  if (uriText === undefined) throw refuse('URI is not specified');
  const expirationTime = timeOf(fields.get('Expiration Time'), rules.zeroTimeIsAbsent);
  const notBefore = timeOf(fields.get('Not Before'), rules.zeroTimeIsAbsent);
  if (expirationTime !== null && issuedAt > expirationTime) throw refuse('Issued At is after Expiration Time');
  if (notBefore !== null && expirationTime !== null && notBefore > expirationTime) throw refuse('Not Before is after Expiration Time');

  return {
    raw,
    domain,
    address,
    statement: hasStatement ? lines[3] : rules.absentStatement,
    uri: parseRequestUri(uriText)!,
    version,
    chainId: fields.get('Chain ID') ?? '',
    nonce: fields.get('Nonce') ?? '',
    issuedAt,
    expirationTime,
    notBefore,
    requestId: fields.get('Request ID') ?? null,
    resources,
  };
}

function timeOf(text: string | undefined, zeroIsAbsent: boolean): number | null {
  const t = text === undefined ? null : parseTimestamp(text);
  return t === null || (zeroIsAbsent && t === ZERO_TIME) ? null : t;
}
