// Whether a `structuredOutput` JSON Schema is usable, checked before a run's stream opens: the
// keywords that shape a schema, not a whole meta-schema validation.

const SCHEMA_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'object', 'array', 'null']);
/** Keywords whose value is one schema, a map of schemas, or a list of schemas. */
const ONE_SCHEMA = [
  'additionalProperties',
  'additionalItems',
  'not',
  'contains',
  'propertyNames',
  'if',
  'then',
  'else',
  'unevaluatedProperties',
  'unevaluatedItems',
];
const SCHEMA_MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const SCHEMA_LIST = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * The first keyword of a JSON Schema whose value has the wrong type, by path, or `undefined`.
 * Not a full meta-schema check: the keywords that shape a schema (`type`, the subschema keywords,
 * `required`, `enum`, `pattern`), which Mastra and the model provider would otherwise fail on
 * after the stream opened. Iterative: the body's nesting limit already bounds the walk.
 */
export function jsonSchemaProblem(root: object): { path: PropertyKey[]; message: string } | undefined {
  const stack: Array<{ node: unknown; path: PropertyKey[] }> = [{ node: root, path: [] }];
  for (let next = stack.pop(); next; next = stack.pop()) {
    const { node, path } = next;
    if (typeof node === 'boolean') continue;
    if (!isRecord(node)) return { path, message: 'a schema must be an object or a boolean' };
    const problem = keywordProblem(node);
    if (problem) return { path: [...path, problem.key], message: problem.message };
    for (const key of ONE_SCHEMA) if (key in node) stack.push({ node: node[key], path: [...path, key] });
    for (const key of SCHEMA_MAP) for (const [name, sub] of Object.entries(node[key] ?? {})) stack.push({ node: sub, path: [...path, key, name] });
    const items: unknown[] = Array.isArray(node.items) ? node.items : 'items' in node ? [node.items] : [];
    const lists = SCHEMA_LIST.flatMap((key) => ((node[key] as unknown[] | undefined) ?? []).map((sub, i) => ({ node: sub, path: [...path, key, i] })));
    stack.push(...items.map((sub, i) => ({ node: sub, path: Array.isArray(node.items) ? [...path, 'items', i] : [...path, 'items'] })), ...lists);
  }
  return undefined;
}

/** The shape of the keywords of one schema object (its subschemas are checked by the caller). */
function keywordProblem(node: Record<string, unknown>): { key: string; message: string } | undefined {
  const types = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type];
  if (types.some((t) => typeof t !== 'string' || !SCHEMA_TYPES.has(t))) return { key: 'type', message: `must be one of ${[...SCHEMA_TYPES].join(', ')}` };
  for (const key of SCHEMA_MAP) if (key in node && !isRecord(node[key])) return { key, message: 'must be an object of schemas' };
  for (const key of SCHEMA_LIST)
    if (key in node && !(Array.isArray(node[key]) && (node[key] as unknown[]).length > 0)) return { key, message: 'must be a non-empty array of schemas' };
  if ('required' in node && !(Array.isArray(node.required) && node.required.every((r) => typeof r === 'string')))
    return { key: 'required', message: 'must be an array of strings' };
  if ('enum' in node && !Array.isArray(node.enum)) return { key: 'enum', message: 'must be an array' };
  for (const key of ['description', 'title', '$ref', 'format']) if (key in node && typeof node[key] !== 'string') return { key, message: 'must be a string' };
  if ('pattern' in node && !compiles(node.pattern)) return { key: 'pattern', message: 'must be a valid regular expression' };
  return undefined;
}

function compiles(pattern: unknown): boolean {
  if (typeof pattern !== 'string') return false;
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}
