// The project's lint: typescript-eslint with type information, for the mistakes the compiler lets
// through (a promise nobody awaits or catches, a promise where a callback's void is expected, `any`)
// and for empty catches, each of which must say why nothing is to be done.
import tseslint from 'typescript-eslint';

/**
 * `promise.catch(() => {})` says nothing of why the failure does not matter: an empty callback to
 * `.catch` needs a comment inside saying so (or a log line at debug).
 */
const emptyCatchCallback = {
  meta: { type: 'suggestion', messages: { empty: 'An empty .catch() callback must say in a comment why nothing is to be done, or log at debug' } },
  create(context) {
    return {
      'CallExpression[callee.property.name="catch"] > :function.arguments'(fn) {
        if (fn.body.type === 'BlockStatement' && fn.body.body.length === 0 && context.sourceCode.getCommentsInside(fn.body).length === 0) {
          context.report({ node: fn, messageId: 'empty' });
        }
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'examples/', 'bench/servers/', 'web/', 'bin/', '**/*.js', '**/*.cjs', '**/*.mjs'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    extends: [tseslint.configs.base],
    plugins: { bridge: { rules: { 'empty-catch-callback': emptyCatchCallback } } },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // Dead code: an import, variable or parameter nobody reads (`_name` says "left out on purpose").
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true }],
      // An empty catch must carry a comment saying why nothing is to be done.
      'no-empty': ['error', { allowEmptyCatch: false }],
      'bridge/empty-catch-callback': 'error',
    },
  },
  {
    // Tests read parsed JSON and SSE frames loosely: `any` is how they say "whatever the wire held".
    files: ['test/**/*.ts', '**/*.test.ts', '**/*.test-d.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
