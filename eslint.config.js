// The project's lint: typescript-eslint's recommended rules with type information, for the mistakes
// the compiler lets through (a promise nobody awaits or catches, a promise where a callback's void is
// expected, `any` and what leaks from it, an object stringified as `[object Object]`), and for empty
// catches, each of which must say why nothing is to be done. The rules turned off say why below.
import tseslint from 'typescript-eslint';

/**
 * `promise.catch(() => {})` and `promise.catch(() => undefined)` say nothing of why the failure
 * does not matter: an empty callback to `.catch` needs a comment inside saying so (or a log line at
 * debug); one that turns the failure into `undefined` needs a comment on its statement's lines or
 * on the line above it.
 */
const emptyCatchCallback = {
  meta: {
    type: 'suggestion',
    messages: {
      empty: 'An empty .catch() callback must say in a comment why nothing is to be done, or log at debug',
      undefined: 'A .catch() that turns the failure into undefined must say in a comment (on its statement, or on the line above) why that is enough',
    },
  },
  create(context) {
    const { sourceCode } = context;
    /** Whether a comment sits on the lines of the statement holding `node` (a trailing one too), or ends on the line above it. */
    const explained = (node) => {
      const statement = sourceCode.getAncestors(node).findLast((a) => /Statement$|Declaration$/.test(a.type) && a.type !== 'BlockStatement') ?? node;
      const { start, end } = statement.loc;
      return sourceCode.getAllComments().some((c) => c.loc.end.line === start.line - 1 || (c.loc.start.line >= start.line && c.loc.start.line <= end.line));
    };
    return {
      'CallExpression[callee.property.name="catch"] > :function.arguments'(fn) {
        if (fn.body.type === 'BlockStatement' && fn.body.body.length === 0 && sourceCode.getCommentsInside(fn.body).length === 0) {
          context.report({ node: fn, messageId: 'empty' });
        } else if (fn.body.type === 'Identifier' && fn.body.name === 'undefined' && !explained(fn)) {
          context.report({ node: fn, messageId: 'undefined' });
        }
      },
    };
  },
};

/**
 * One door into Mastra (`src/mastra/`): outside it, a call of a method that `@mastra/*` declares
 * (on an agent, a memory, a workflow, the instance, its pub/sub or storage) is refused, whatever
 * the method is called. Told by the type checker where the called method is declared, not by a
 * list of names: a method Mastra adds is covered the day it is.
 */
const mastraDoor = {
  meta: {
    type: 'problem',
    messages: { call: "{{name}}() is Mastra's: call it through a function of src/mastra/ (the one door into Mastra)" },
  },
  create(context) {
    const services = context.sourceCode.parserServices;
    if (!services?.program) return {};
    const checker = services.program.getTypeChecker();
    const fromMastra = (declaration) => /[\\/]node_modules[\\/]@mastra[\\/]/.test(declaration.getSourceFile().fileName);
    return {
      'CallExpression > MemberExpression.callee'(callee) {
        const symbol = checker.getSymbolAtLocation(services.esTreeNodeToTSNodeMap.get(callee.property));
        if (symbol?.declarations?.some(fromMastra)) context.report({ node: callee, messageId: 'call', data: { name: symbol.name } });
      },
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'examples/', 'bench/servers/', 'bin/', '**/*.js', '**/*.cjs', '**/*.mjs', '!web/*.js'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    plugins: { bridge: { rules: { 'empty-catch-callback': emptyCatchCallback, 'mastra-door': mastraDoor } } },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // Dead code: an import, variable or parameter nobody reads (`_name` says "left out on purpose").
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // An empty catch must carry a comment saying why nothing is to be done.
      'no-empty': ['error', { allowEmptyCatch: false }],
      'bridge/empty-catch-callback': 'error',
      // Off: an `async` function with nothing to await is how the bridge keeps an async contract (a
      // route handler, a port's in-process implementation, a hook Mastra awaits): a throw in it
      // becomes a rejection, which is what the contract's callers handle.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Small units: a source file over 400 lines, or a function over 60, does more than one job.
    files: ['src/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.test-d.ts'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true, IIFEs: true }],
    },
  },
  {
    // Mastra is called through its door only; the code that uses Mastra as any app does is exempt:
    // the demo agent, the standalone server (it builds its `Mastra`), the pub/sub (a Mastra
    // `PubSub`, to be a package of its own) and the client (HTTP only).
    files: ['src/**/*.ts'],
    ignores: ['src/mastra/**', 'src/demo/**', 'src/server/**', 'src/redis/pubsub/**', 'src/client/**', '**/*.test.ts'],
    rules: { 'bridge/mastra-door': 'error' },
  },
  {
    // The demo page: plain ES modules checked by `tsc -p web` (JSDoc types), linted as the sources
    // are, with the same bound on a file's size. Its elements are looked up by id (`$`, typed
    // loosely), so the rules on using an `any` are off here, as in the tests.
    files: ['web/*.js'],
    extends: [tseslint.configs.recommendedTypeChecked],
    plugins: { bridge: { rules: { 'empty-catch-callback': emptyCatchCallback } } },
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { window: 'readonly', document: 'readonly', location: 'readonly', history: 'readonly', crypto: 'readonly', sessionStorage: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      'no-empty': ['error', { allowEmptyCatch: false }],
      'bridge/empty-catch-callback': 'error',
      'max-lines': ['error', { max: 400 }],
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Tests read parsed JSON and SSE frames loosely: `any` is how they say "whatever the wire held",
    // and they compare an event's `type` with the string the wire held. The rules on using an
    // `any` (and on comparing an enum with a string) would flag every such read, so they are off here.
    files: ['test/**/*.ts', '**/*.test.ts', '**/*.test-d.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-enum-comparison': 'off',
    },
  },
);
