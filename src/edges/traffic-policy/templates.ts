// `${…}` interpolations in the strings of action configs (custom-response content and headers,
// add-headers values, redirect's `to` and headers, url-rewrite's `to`, log metadata), as ngrok's
// actions have them: `Hello ${req.url.path}`. The control plane stores them unchecked
// (config-values.ts passes over them), so they are compiled here, once, in the rule's
// environment; one that does not compile makes its action fail with an error decision each time
// it runs (and is logged once, at compile time), rather than sending the text as it is.
//
// Ruling on `$1`-style group references in redirect's and url-rewrite's `to` (Go's Expand, run on
// the match of `from`): `${1}` and `${name}` are both group references and CEL. In those two
// templates, `${digits}`, and `${identifier}` where the identifier is not a variable of the phase
// (conn, endpoint, time, req, res), stay group references; anything else is CEL. The value of a
// CEL part has its `$` doubled there, so that a value cannot smuggle a group reference in.
import { celVariables, type CelEnvName } from '../../edge-config/traffic-policy/cel.js';
import { celText, compileProgram, type Activation, type Program } from './cel-runtime.js';

export interface Template {
  /** The text with each interpolation's value in place; throws when one fails to evaluate (or did not compile). */
  render(activation: Activation): string;
  /** The problem of an interpolation that does not compile, if one does not. */
  readonly problem?: string;
}

type Part = string | { expression: string; program?: Program; problem?: string };

/** The end of the `${` at `start` (the index of its `}`), skipping braces and quotes inside CEL; -1 when it does not close. */
function closing(text: string, start: number): number {
  let depth = 0;
  for (let i = start + 2; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"' || char === "'") {
      const triple = text.startsWith(char.repeat(3), i);
      const quote = triple ? char.repeat(3) : char;
      i += quote.length;
      while (i < text.length && !text.startsWith(quote, i)) i += text[i] === '\\' ? 2 : 1;
      i += quote.length - 1;
    } else if (char === '{') depth++;
    else if (char === '}') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

export interface TemplateOptions {
  env: CelEnvName;
  /** redirect's and url-rewrite's `to`: keep group references, escape `$` in values. */
  groupReferences?: boolean;
}

export function compileTemplate(text: string, { env, groupReferences = false }: TemplateOptions): Template {
  const parts: Part[] = [];
  const variables = groupReferences ? new Set(celVariables(env)) : undefined;
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const start = text.indexOf('${', i);
    if (start === -1) break;
    const end = closing(text, start);
    if (end === -1) break;
    const expression = text.slice(start + 2, end);
    literal += text.slice(i, start);
    i = end + 1;
    const bare = expression.trim();
    if (variables && (/^\d+$/.test(bare) || (/^[A-Za-z_]\w*$/.test(bare) && !variables.has(bare)))) {
      literal += text.slice(start, end + 1);
      continue;
    }
    if (literal !== '') parts.push(literal);
    literal = '';
    try {
      parts.push({ expression, program: compileProgram(expression, env) });
    } catch (error) {
      parts.push({ expression, problem: `the interpolation '\${${expression}}' does not compile: ${(error as Error).message}` });
    }
  }
  literal += text.slice(i);
  if (literal !== '') parts.push(literal);

  const problem = parts.find((part): part is { expression: string; problem: string } => typeof part === 'object' && part.problem !== undefined)?.problem;
  if (parts.every((part) => typeof part === 'string')) {
    const fixed = parts.join('');
    return { render: () => fixed };
  }
  return {
    problem,
    render(activation) {
      let out = '';
      for (const part of parts) {
        if (typeof part === 'string') out += part;
        else if (part.program) {
          let value: string;
          try {
            value = celText(part.program(activation));
          } catch (error) {
            const reason = (error as { summary?: string }).summary ?? (error as Error).message;
            throw new Error(`the interpolation '\${${part.expression}}' failed: ${String(reason).split('\n')[0]}`, { cause: error });
          }
          out += groupReferences ? value.replaceAll('$', '$$$$') : value;
        } else throw new Error(part.problem);
      }
      return out;
    },
  };
}
