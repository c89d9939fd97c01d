// Follows a chunked request body (RFC 9112 7.1) byte by byte without decoding it: the guard hands the
// bytes on unchanged and only needs to know where the body ends, so the next request's head can be
// checked, and whether the framing is broken, so the client gets a 400 instead of a dropped connection.

/** A chunk-size line (size and extensions) or a trailer line longer than this is refused. */
const MAX_LINE = 4096;
/** At most this many trailer lines. */
const MAX_TRAILERS = 32;

type State = 'size' | 'data' | 'data-cr' | 'data-lf' | 'trailer';

export type ChunkStep = { kind: 'more'; consumed: number } | { kind: 'done'; consumed: number } | { kind: 'broken'; reason: string };

export class ChunkedBody {
  private state: State = 'size';
  private line = '';
  private remaining = 0;
  private trailers = 0;

  /** Reads from `buf` at `start`; `consumed` bytes belong to this body. */
  feed(buf: Buffer, start: number): ChunkStep {
    let i = start;
    while (i < buf.length) {
      if (this.state === 'data') {
        const take = Math.min(this.remaining, buf.length - i);
        i += take;
        this.remaining -= take;
        if (this.remaining === 0) this.state = 'data-cr';
        continue;
      }
      const byte = buf[i++];
      if (this.state === 'data-cr' || this.state === 'data-lf') {
        const expected = this.state === 'data-cr' ? 0x0d : 0x0a;
        if (byte !== expected) return { kind: 'broken', reason: 'a chunk does not end with CRLF' };
        if (this.state === 'data-lf') this.state = 'size';
        else this.state = 'data-lf';
        continue;
      }
      // 'size' or 'trailer': collect a line up to CRLF
      if (byte !== 0x0a) {
        if (this.line.length >= MAX_LINE) return { kind: 'broken', reason: 'a chunk line is too long' };
        this.line += String.fromCharCode(byte);
        continue;
      }
      if (!this.line.endsWith('\r')) return { kind: 'broken', reason: 'chunk lines must end with CRLF' };
      const text = this.line.slice(0, -1);
      this.line = '';
      if (this.state === 'size') {
        const size = /^([0-9A-Fa-f]{1,8})(?:[ \t]*;.*)?$/.exec(text);
        if (!size) return { kind: 'broken', reason: 'a chunk size is not hexadecimal' };
        this.remaining = parseInt(size[1], 16);
        this.state = this.remaining === 0 ? 'trailer' : 'data';
        continue;
      }
      if (text === '') return { kind: 'done', consumed: i - start };
      if (++this.trailers > MAX_TRAILERS) return { kind: 'broken', reason: 'too many trailer fields' };
    }
    return { kind: 'more', consumed: i - start };
  }
}
