// Counts the answers uWS writes back on one connection, so the guard knows when every request it handed
// on has been answered: its own refusal of a later request must come after them, in order (HTTP/1.1
// pipelining). The bytes themselves pass through untouched; only the framing is read.
import { ChunkedBody } from './chunked-body.js';

const HEAD_END = Buffer.from('\r\n\r\n');

type State = { kind: 'head' } | { kind: 'length'; remaining: number } | { kind: 'chunked'; body: ChunkedBody } | { kind: 'until-close' };

export class ResponseFraming {
  private state: State = { kind: 'head' };
  private pending: Buffer | null = null;
  /** the methods of requests handed on and not yet answered, oldest first (a HEAD answer has no body) */
  private readonly methods: string[] = [];

  get outstanding(): number {
    return this.methods.length;
  }

  /** some bytes of the oldest outstanding answer have come (its head, part of it, or part of its body) */
  get answering(): boolean {
    return this.state.kind !== 'head' || this.pending !== null;
  }

  handedOn(method: string): void {
    this.methods.push(method);
  }

  /** Reads answer bytes; returns how many answers were completed by them. */
  read(chunk: Buffer): number {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    let i = 0;
    let completed = 0;
    while (i < buf.length) {
      const state = this.state;
      if (state.kind === 'until-close') return completed;
      if (state.kind === 'length') {
        const take = Math.min(state.remaining, buf.length - i);
        i += take;
        state.remaining -= take;
        if (state.remaining === 0) completed += this.answered();
        continue;
      }
      if (state.kind === 'chunked') {
        const step = state.body.feed(buf, i);
        if (step.kind === 'broken') {
          this.state = { kind: 'until-close' };
          return completed;
        }
        i += step.consumed;
        if (step.kind === 'done') completed += this.answered();
        continue;
      }
      const at = buf.indexOf(HEAD_END, i);
      if (at < 0) {
        this.pending = buf.subarray(i);
        return completed;
      }
      const head = buf.toString('latin1', i, at);
      i = at + 4;
      const status = Number(head.slice(9, 12));
      if (status >= 100 && status < 200) continue; // 100 Continue: an interim answer, the final one follows
      const bodyless = status === 204 || status === 304 || this.methods[0] === 'HEAD';
      const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
      if (bodyless || (length && Number(length[1]) === 0)) completed += this.answered();
      else if (length) this.state = { kind: 'length', remaining: Number(length[1]) };
      else if (/\r\ntransfer-encoding:[ \t]*chunked/i.test(head)) this.state = { kind: 'chunked', body: new ChunkedBody() };
      else this.state = { kind: 'until-close' };
    }
    return completed;
  }

  private answered(): number {
    this.methods.shift();
    this.state = { kind: 'head' };
    return 1;
  }
}
