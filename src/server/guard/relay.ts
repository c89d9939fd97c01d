// One client connection through the guard: request heads are collected whole, checked
// (request-head.ts) and handed to an HTTP thread's uWS in one write, bodies follow unchanged, and the
// answers flow back untouched while their framing is counted (response-framing.ts). A request the guard
// refuses is answered by the guard itself, after every earlier request on the connection has had its
// answer, and the connection then closes gracefully: the client reads the answer, never a reset.
import type net from 'node:net';
import { ChunkedBody } from './chunked-body.js';
import { proxyHeader } from './proxy-header.js';
import { readRequestHead, type Refusal } from './request-head.js';
import { ResponseFraming } from './response-framing.js';
import { lingerThenClose, refusalBytes, refusalError } from './refusals.js';
import { apiError, type ApiError } from '../errors.js';

export interface RelayOptions {
  /** a head must be complete this long after its first byte (and a connection silent from its start is closed after it) */
  headTimeoutMs: number;
  /**
   * Between requests, a connection that has had an answer is kept while it is quiet for this long (a
   * multiple of headTimeoutMs). Longer than the proxies in front keep theirs, so that it is they that close:
   * a request written as the service closed would be lost (docs/http-guard.md#kept-alive-connections).
   */
  keepAliveMs: number;
  /**
   * A connection to an HTTP thread quiet this long is not used for the next request; a fresh one is. uWS
   * closes a quiet connection 8–12 s after its last activity, and a request written as it closed would be lost.
   */
  upstreamIdleMs: number;
  /** a body that stops arriving for this long is answered 408: less than uWS's own idle timeout, which would close it unanswered */
  bodyIdleMs: number;
  /** after a refusal, how long the client's remaining bytes are read and dropped before the socket closes */
  lingerMs: number;
  /** opens a connection to the next HTTP thread not in `tried`; null when none is left */
  connectUpstream(tried: Set<string>): { socket: net.Socket; id: string } | null;
  /** one log line per refusal: what was refused and why (never header values) */
  refused(err: ApiError, client: net.Socket): void;
}

type Phase = 'head' | 'length' | 'chunked' | 'refusing' | 'closed';

/** Requests that change nothing (RFC 9110 9.2.1): sent again when their thread went away before answering. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the guard may do to a relayed connection besides letting it run. */
export interface RelayedConnection {
  /**
   * Closes the connection if it is quiet between requests (nothing unread, no answer owed), as its keep-alive
   * timer would, and says whether it did: room for another when the guard holds all it may.
   */
  closeIfIdle(): boolean;
}

export function relay(client: net.Socket, options: RelayOptions): RelayedConnection {
  return new Relay(client, options);
}

class Relay implements RelayedConnection {
  private phase: Phase = 'head';
  private input: Buffer | null = null;
  private bodyLeft = 0;
  private chunked: ChunkedBody | null = null;
  /** the current request's head was handed on but not all of its body */
  private partial = false;
  private headStartedAt = 0;
  /** the client's idle timeout is bodyIdleMs: a body is awaited, handed on to uWS only in part */
  private awaitingBody = false;
  private upstream: net.Socket | null = null;
  private connected = false;
  /** when the thread's connection connected or last completed an answer (Date.now()): quiet since, when nothing is owed */
  private upstreamSeenAt = 0;
  /** a request on this connection has had its answer */
  private served = false;
  /** head timeouts in a row that found the connection quiet between requests */
  private quietTicks = 0;
  private waiting: Buffer[] = [];
  private readonly tried = new Set<string>();
  private readonly framing = new ResponseFraming();
  private refusal: ApiError | null = null;
  private clientPaused = false;
  private upstreamPaused = false;
  /** a request handed on asked for the connection to end after its answer */
  private closing = false;
  /**
   * The heads of the requests handed on and not yet answered, oldest first, while every one of them is a
   * safe request without a body; null once one is not (nothing can be sent again until all are answered).
   */
  private unanswered: Buffer[] | null = [];
  /** the unanswered requests were sent again once already */
  private resent = false;

  constructor(
    private readonly client: net.Socket,
    private readonly options: RelayOptions,
  ) {
    client.setNoDelay(true);
    // on, not the once that setTimeout's callback would be: a connection is found quiet more than once.
    client.setTimeout(options.headTimeoutMs);
    client.on('timeout', () => this.clientIdle());
    client.on('data', (chunk: Buffer) => this.fromClient(chunk));
    client.on('error', () => this.close());
    client.on('close', () => this.close());
  }

  private fromClient(chunk: Buffer): void {
    if (this.phase === 'refusing' || this.phase === 'closed') return; // read and dropped while lingering
    this.quietTicks = 0;
    this.input = this.input ? Buffer.concat([this.input, chunk]) : chunk;
    const upstream = this.connected ? this.upstream : null;
    upstream?.cork();
    try {
      this.pump();
    } finally {
      upstream?.uncork();
    }
  }

  /** Moves every whole piece of the input on: heads once checked, body bytes as they come. */
  private pump(): void {
    let buf = this.input!;
    let at = 0;
    while (at < buf.length) {
      if (this.phase === 'head') {
        const head = readRequestHead(buf, at);
        if (head.kind === 'refused') return this.refuse(refusalError(head.refusal));
        if (head.kind === 'incomplete') {
          if (this.headStartedAt === 0) this.headStartedAt = Date.now();
          else if (Date.now() - this.headStartedAt > this.options.headTimeoutMs) return this.refuse(apiError('http_head_timeout'));
          break;
        }
        this.headStartedAt = 0;
        if (this.connected && this.framing.outstanding === 0 && Date.now() - this.upstreamSeenAt >= this.options.upstreamIdleMs) {
          this.dropUpstream();
        }
        this.handOn(head.value.head);
        if (this.phase !== 'head') return; // no HTTP thread could take it: refused
        this.framing.handedOn(head.value.method);
        if (head.value.closes) this.closing = true;
        at = head.end;
        const body = head.value.body;
        const resendable = SAFE_METHODS.has(head.value.method) && body.kind === 'length' && body.bytes === 0;
        if (resendable && this.unanswered) this.unanswered.push(head.value.head);
        else this.unanswered = null;
        if (body.kind === 'chunked') {
          this.phase = 'chunked';
          this.chunked = new ChunkedBody();
          this.partial = true;
        } else if (body.bytes > 0) {
          this.phase = 'length';
          this.bodyLeft = body.bytes;
          this.partial = true;
        }
      } else if (this.phase === 'length') {
        const take = Math.min(this.bodyLeft, buf.length - at);
        this.handOn(buf.subarray(at, at + take));
        at += take;
        this.bodyLeft -= take;
        if (this.bodyLeft === 0) this.bodyDone();
      } else if (this.phase === 'chunked') {
        const step = this.chunked!.feed(buf, at);
        if (step.kind === 'broken') return this.refuse(refusalError({ kind: 'malformed', reason: step.reason } satisfies Refusal));
        this.handOn(buf.subarray(at, at + step.consumed));
        at += step.consumed;
        if (step.kind === 'done') this.bodyDone();
      } else return;
    }
    buf = buf.subarray(at);
    this.input = buf.length > 0 ? buf : null;
    this.watchBody(this.phase === 'length' || this.phase === 'chunked');
  }

  /**
   * While a body is awaited, uWS has its head and times the connection out on its own (8–12 s after its last
   * read, its timer ticking every 4 s) without an answer; the guard's shorter timer answers first. Switched
   * only when a body outlasts the read its head came in, so the common request re-arms no timer.
   */
  private watchBody(awaiting: boolean): void {
    if (awaiting === this.awaitingBody) return;
    this.awaitingBody = awaiting;
    this.client.setTimeout(awaiting ? this.options.bodyIdleMs : this.options.headTimeoutMs);
  }

  private bodyDone(): void {
    this.phase = 'head';
    this.chunked = null;
    this.partial = false;
  }

  private handOn(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (!this.connected) {
      this.waiting.push(bytes);
      if (!this.upstream) this.connect();
      return;
    }
    if (!this.upstream!.write(bytes) && !this.clientPaused) {
      this.clientPaused = true;
      this.client.pause();
      this.upstream!.once('drain', () => {
        this.clientPaused = false;
        this.client.resume();
      });
    }
  }

  private connect(): void {
    const picked = this.options.connectUpstream(this.tried);
    if (!picked) {
      this.upstream = null;
      return this.refuse(apiError('over_capacity'));
    }
    this.tried.add(picked.id);
    const socket = picked.socket;
    this.upstream = socket;
    socket.once('connect', () => {
      if (this.phase === 'closed') return void socket.destroy();
      this.connected = true;
      this.upstreamSeenAt = Date.now();
      socket.cork();
      socket.write(proxyHeader(this.client));
      for (const bytes of this.waiting) socket.write(bytes);
      socket.uncork();
      this.waiting = [];
    });
    socket.on('data', (chunk: Buffer) => this.fromUpstream(chunk));
    socket.on('error', () => {
      // Before it connected (a thread being replaced): try the next one with the bytes still held here.
      // (A connection already left for a fresh one is not this one's to replace.)
      if (!this.connected && this.upstream === socket && this.phase !== 'closed') {
        socket.destroy();
        return this.connect();
      }
    });
    socket.on('close', () => {
      if (this.connected && this.upstream === socket) this.upstreamClosed();
    });
  }

  private fromUpstream(chunk: Buffer): void {
    const completed = this.framing.read(chunk);
    if (completed > 0) this.answered(completed);
    if (this.phase === 'closed') return;
    if (!this.client.write(chunk) && !this.upstreamPaused) {
      this.upstreamPaused = true;
      this.upstream!.pause();
      this.client.once('drain', () => {
        this.upstreamPaused = false;
        this.upstream?.resume();
      });
    }
    if (this.refusal) this.answerRefusal();
  }

  /** The oldest requests had their answers: theirs no longer need keeping. */
  private answered(count: number): void {
    this.served = true;
    this.upstreamSeenAt = Date.now(); // once per answer, not per chunk: only a connection owing nothing is judged
    this.resent = false;
    if (this.unanswered) this.unanswered.splice(0, count);
    else if (this.framing.outstanding === 0) this.unanswered = [];
  }

  private refuse(err: ApiError): void {
    this.phase = 'refusing';
    this.input = null;
    this.refusal = err;
    this.options.refused(err, this.client);
    this.answerRefusal();
  }

  /** The refusal goes out once every request before it has been answered; uWS drops the rest. */
  private answerRefusal(): void {
    const earlier = this.framing.outstanding - (this.partial ? 1 : 0);
    if (earlier > 0 && this.upstream) return; // connected or still connecting: their answers will come
    const err = this.refusal!;
    this.refusal = null;
    this.upstream?.destroy();
    this.upstream = null;
    // A request refused half-way whose answer already came (the service answered before reading its body)
    // needs no second answer.
    const answeredAlready = this.partial && this.framing.outstanding === 0;
    if (!answeredAlready && earlier <= 0) this.client.write(refusalBytes(err));
    this.linger();
  }

  private linger(): void {
    lingerThenClose(this.client, this.options.lingerMs);
  }

  private upstreamClosed(): void {
    this.upstream = null;
    this.connected = false;
    if (this.phase === 'closed') return;
    if (this.refusal) return this.answerRefusal();
    if (this.phase === 'refusing') return;
    // Between requests, every answer delivered, and the client not done: its thread went away (a roll-over
    // drained it, a crashed one is being replaced) or timed the connection out. The client keeps its
    // connection, and its next request opens one to a live thread (docs/http-guard.md#threads-that-go-away).
    const idle = !this.closing && this.framing.outstanding === 0;
    // Safe requests without a body whose answer had not begun are sent to a live thread once more, as
    // proxies retry them (RFC 9110 9.2.2): their thread closed before it answered, and they change nothing.
    const resend = this.framing.outstanding > 0 && !this.framing.answering && this.unanswered !== null && !this.resent;
    if (this.phase === 'head' && (idle || resend)) {
      this.tried.clear();
      if (this.clientPaused) {
        this.clientPaused = false;
        this.client.resume();
      }
      if (resend) {
        this.resent = true;
        this.waiting = [...this.unanswered!]; // a copy: later requests join both lists until answered
        this.connect();
      }
      return;
    }
    // Closed with an answer still owed, or as asked (Connection: close): so does the client, once it has
    // everything that came.
    this.phase = 'refusing';
    this.linger();
  }

  private clientIdle(): void {
    // (A client we stopped reading, while uWS drains what it has, is not idle: it waits on us.)
    if ((this.phase === 'length' || this.phase === 'chunked') && !this.clientPaused) return this.refuse(apiError('http_body_timeout'));
    if (this.phase !== 'head') return;
    if (this.input) return this.refuse(apiError('http_head_timeout'));
    if (this.framing.outstanding > 0) return; // an answer is awaited: its bytes will wake the timer again
    // Quiet between requests. One that never had an answer goes now; a kept-alive one once quiet for
    // keepAliveMs, the timer re-armed meanwhile (the original keeps such a connection with no limit at all).
    if (!this.served || ++this.quietTicks * this.options.headTimeoutMs >= this.options.keepAliveMs) return this.close();
    this.client.setTimeout(this.options.headTimeoutMs);
  }

  closeIfIdle(): boolean {
    if (this.phase !== 'head' || this.input || this.framing.outstanding > 0) return false;
    this.close();
    return true;
  }

  /** Leaves the thread's connection for a fresh one, taken by the next bytes handed on (handOn). */
  private dropUpstream(): void {
    const stale = this.upstream;
    this.upstream = null; // first: its close is then not taken for the thread going away
    this.connected = false;
    this.tried.clear();
    stale?.destroy();
  }

  private close(): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    this.client.destroy();
    this.upstream?.destroy();
    this.upstream = null;
  }
}
