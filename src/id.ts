import { z } from 'zod';

/**
 * Code points an id may not hold: a lone UTF-16 surrogate (it has no UTF-8 form: a `threadId`
 * holding one failed the run with `URI malformed` after the stream opened) and control characters
 * (PostgreSQL refuses NUL in text; none belongs in an id).
 */
const UNSAFE_ID_CHAR = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]|[\u0000-\u001f\u007f]/;

/**
 * An id as every route takes it (threads, runs, messages, tool calls, resources, agents):
 * 1 to 512 characters, no lone surrogate, no control character.
 */
export const IdSchema = z
  .string()
  .min(1)
  .max(512)
  .refine((value) => !UNSAFE_ID_CHAR.test(value), 'must not contain control characters or lone UTF-16 surrogates');
