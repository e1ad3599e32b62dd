import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// Layering: inner layers never import outer ones. Providers and storage know nothing of HTTP.
const noHttpImports = {
  patterns: [{ group: ['**/http/**', 'fastify'], message: 'Inner layers must not depend on the HTTP layer; return or throw GatewayError instead.' }],
};

export default tseslint.config(
  { ignores: ['dist/**', 'dist-bench/**', 'node_modules/**', 'bench/.peer/**', 'bench/results/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { globals: globals.node, parserOptions: { projectService: { allowDefaultProject: ['*.js', 'bin/*.js'] }, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  {
    files: ['src/providers/**', 'src/storage/**', 'src/auth/**', 'src/core/**', 'src/errors/**', 'src/config/**', 'src/catalog/**'],
    ignores: ['**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', noHttpImports] },
  },
  {
    files: ['test/**', '**/*.test.ts', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
