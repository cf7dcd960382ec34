import type { Message } from '@ag-ui/core';
import { jsonObjectOf } from '../text.js';

/**
 * A workflow run's input data, from what a chat client sends (docs/api.md "Workflows"):
 * `forwardedProps.input` when given; else the last user message's text: a JSON object is taken as
 * the input; otherwise, when the input schema is an object with exactly one required string
 * field, the text is that field's value; else the text as it is (the schema then says what is
 * wrong with it).
 *
 * @example
 * workflowInput({ messages: [{ id: 'm1', role: 'user', content: 'tea' }] }, { type: 'object', required: ['topic'], properties: { topic: { type: 'string' } } });
 * // { topic: 'tea' }
 */
export function workflowInput(
  input: { messages: readonly Message[]; forwardedProps?: { input?: unknown } | null },
  inputSchema: Record<string, unknown> | undefined,
): unknown {
  if (input.forwardedProps?.input !== undefined) return input.forwardedProps.input;
  const text = lastUserText(input.messages);
  if (text === undefined) return undefined;
  const json = jsonObjectOf(text);
  if (json) return json;
  const field = singleStringField(inputSchema);
  return field ? { [field]: text } : text;
}

/** The text of the last user message, if there is one. */
export function lastUserText(messages: readonly Message[]): string | undefined {
  const last = messages.findLast((m) => m.role === 'user');
  if (!last) return undefined;
  const { content } = last as { content: unknown };
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  return content
    .filter((part: { type?: unknown; text?: unknown } | null): part is { type: 'text'; text: string } => part?.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
}

/** The one required field of an object schema, when there is exactly one and it is a string. */
function singleStringField(schema: Record<string, unknown> | undefined): string | undefined {
  if (schema?.type !== 'object' || !Array.isArray(schema.required) || schema.required.length !== 1) return undefined;
  const [field] = schema.required as unknown[];
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  return typeof field === 'string' && properties[field]?.type === 'string' ? field : undefined;
}
