// Runs a parsed template (go-template-parse.ts) over the mail's variables with Go's text/template rules
// for truth, comparison, ranging and printing (docs/one-time-codes-and-mail.md#template-language).
// Values are JSON-like, as user_metadata is: strings, numbers, booleans, null, arrays and plain objects.
// A failing action (a comparison of a string with a number, an index out of range, an unknown variable)
// prints nothing and a failing condition counts as false, where Go would stop the whole mail: a mail with
// one empty spot is better than none. Work is bounded, because the data ranged over can be a user's.
import { callBuiltin, isTrue, printed, TemplateExecError } from './go-template-functions.js';
import type { Command, Operand, Pipeline, TemplateNode } from './go-template-parse.js';

/** Looks up a dotted field path from the template's root, e.g. ['Data', 'first_name']; undefined when absent. */
export type FieldLookup = (path: string[]) => unknown;

export class GoTemplateLimitError extends Error {
  override readonly name = 'GoTemplateLimitError';
}

/** Steps (actions, loop turns) and output characters one render may take. */
export const RENDER_LIMITS = { steps: 200_000, characters: 2_000_000 };

/** The template's root data: field paths from it go through the caller's lookup, not through an object. */
const ROOT = Symbol('root');

/** Thrown by {{break}} and {{continue}} up to the range that runs them. */
class LoopSignal extends Error {
  constructor(readonly kind: 'break' | 'continue') {
    super(kind);
  }
}

type Scope = Map<string, unknown>[];
const newFrame = (): Map<string, unknown> => new Map<string, unknown>();
type BlockNode = Extract<TemplateNode, { body: TemplateNode[] }>;

export function executeGoTemplate(nodes: TemplateNode[], lookup: FieldLookup, escape: (text: string) => string): string {
  const run = new Execution(lookup, escape);
  run.nodes(nodes, ROOT, [new Map([['$', ROOT]])]);
  return run.output.join('');
}

class Execution {
  readonly output: string[] = [];
  private steps = 0;
  private characters = 0;

  constructor(
    private readonly lookup: FieldLookup,
    private readonly escape: (text: string) => string,
  ) {}

  nodes(nodes: TemplateNode[], dot: unknown, scope: Scope): void {
    for (const node of nodes) this.node(node, dot, scope);
  }

  private node(node: TemplateNode, dot: unknown, scope: Scope): void {
    if (++this.steps > RENDER_LIMITS.steps) throw new GoTemplateLimitError('template took too many steps');
    switch (node.kind) {
      case 'text':
        return this.write(node.text);
      case 'print': {
        const value = this.attempt(() => this.pipeline(node.pipeline, dot, scope));
        if (node.pipeline.variables.length === 0) this.write(this.escape(printed(value)));
        return;
      }
      case 'if':
      case 'with': {
        const inner: Scope = [...scope, newFrame()];
        const value = this.attempt(() => this.pipeline(node.pipeline, dot, inner));
        if (isTrue(value)) return this.nodes(node.body, node.kind === 'with' ? value : dot, inner);
        return this.nodes(node.otherwise, dot, [...scope, newFrame()]);
      }
      case 'range':
        return this.range(node, dot, scope);
      case 'break':
      case 'continue':
        throw new LoopSignal(node.kind);
    }
  }

  private range(node: BlockNode, dot: unknown, scope: Scope): void {
    const inner: Scope = [...scope, newFrame()];
    // Declared variables are set per turn, so the pipeline itself declares none.
    const head: Pipeline = { ...node.pipeline, variables: [] };
    const entries = (this.attempt(() => rangeEntries(this.pipeline(head, dot, inner))) ?? []) as [unknown, unknown][];
    if (entries.length === 0) return this.nodes(node.otherwise, dot, [...scope, newFrame()]);
    const [first, second] = node.pipeline.variables;
    for (const [key, value] of entries) {
      const turn: Scope = [...inner, newFrame()];
      // One variable takes the element; two take the key (or index) and the element, as in Go.
      if (second !== undefined) this.declare(turn, first, key).declare(turn, second, value);
      else if (first !== undefined) this.declare(turn, first, value);
      try {
        this.nodes(node.body, value, turn);
      } catch (signal) {
        if (!(signal instanceof LoopSignal)) throw signal;
        if (signal.kind === 'break') return;
      }
      if (++this.steps > RENDER_LIMITS.steps) throw new GoTemplateLimitError('template took too many steps');
    }
  }

  private declare(scope: Scope, name: string, value: unknown): this {
    scope[scope.length - 1].set(name, value);
    return this;
  }

  /** A failing action evaluates to nothing (undefined), which prints as nothing and is false. */
  private attempt(evaluate: () => unknown): unknown {
    try {
      return evaluate();
    } catch (err) {
      if (err instanceof TemplateExecError) return undefined;
      throw err;
    }
  }

  private write(text: string): void {
    this.characters += text.length;
    if (this.characters > RENDER_LIMITS.characters) throw new GoTemplateLimitError('template output is too long');
    this.output.push(text);
  }

  private pipeline(pipeline: Pipeline, dot: unknown, scope: Scope): unknown {
    let value: unknown;
    let hasValue = false;
    for (const command of pipeline.commands) {
      value = this.command(command, dot, scope, hasValue ? [value] : []);
      hasValue = true;
    }
    for (const name of pipeline.variables) {
      if (!pipeline.assign) {
        this.declare(scope, name, value);
        continue;
      }
      const holder = [...scope].reverse().find((frame) => frame.has(name));
      if (!holder) throw new TemplateExecError(`undefined variable: ${name}`);
      holder.set(name, value);
    }
    return value;
  }

  private command(command: Command, dot: unknown, scope: Scope, piped: unknown[]): unknown {
    const [head, ...rest] = command;
    if (head.kind === 'function') {
      // Arguments are evaluated lazily, so `and` and `or` stop at the first operand that decides.
      const args = [...rest.map((operand) => () => this.operand(operand, dot, scope)), ...piped.map((value) => () => value)];
      return callBuiltin(head.name, args);
    }
    if (rest.length > 0 || piped.length > 0) throw new TemplateExecError("can't give argument to non-function");
    return this.operand(head, dot, scope);
  }

  private operand(operand: Operand, dot: unknown, scope: Scope): unknown {
    switch (operand.kind) {
      case 'literal':
        return operand.value;
      case 'dot':
        return this.field(dot, operand.path);
      case 'variable': {
        const frame = [...scope].reverse().find((candidate) => candidate.has(operand.name));
        if (!frame) throw new TemplateExecError(`undefined variable: ${operand.name}`);
        return this.field(frame.get(operand.name), operand.path);
      }
      case 'pipeline':
        return this.field(this.pipeline(operand.pipeline, dot, [...scope, newFrame()]), operand.path);
      case 'function':
        return callBuiltin(operand.name, []);
    }
  }

  private field(base: unknown, path: string[]): unknown {
    if (base === ROOT) return path.length === 0 ? ROOT : this.lookup(path);
    let node = base;
    for (const key of path) {
      if (node === null || node === undefined) return undefined;
      if (typeof node !== 'object' || Array.isArray(node)) throw new TemplateExecError(`can't evaluate field ${key}`);
      // Own properties only: a template must not reach `constructor` or `__proto__`.
      node = Object.hasOwn(node, key) ? (node as Record<string, unknown>)[key] : undefined;
    }
    return node;
  }
}

/** [key, value] pairs in Go's order: arrays by index, objects by sorted key; anything else has none. */
function rangeEntries(value: unknown): [unknown, unknown][] {
  if (Array.isArray(value)) return value.map((element, index) => [index, element]);
  if (value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    return Object.keys(object)
      .sort()
      .map((key) => [key, object[key]]);
  }
  if (value === undefined || value === null) return [];
  throw new TemplateExecError("range can't iterate over this value");
}
