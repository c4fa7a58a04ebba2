// `npm run check` runs prettier, this config (zero warnings) and tsc.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // test/generated-client/ is type-checked by its own e2e test, against types generated then.
  { ignores: ['dist/**', 'dist-dev/**', 'node_modules/**', '.data/**', 'coverage/**', '*.js', '*.mjs', 'test/generated-client/**'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // A kind, state or outcome added to a union fails here until every switch over it without a
      // `default` decides.
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // One import per module (a type-only one may stand beside it): moves between files left
      // three imports of network-status.ts in one file.
      'no-duplicate-imports': ['error', { allowSeparateTypeImports: true }],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            // Lengths count code points, as pydantic and Postgres do: class-validator's length
            // checks (validator.js isLength) leave out variation selectors, so a name they let
            // through was too long for its column.
            {
              name: 'class-validator',
              importNames: ['Length', 'MaxLength', 'MinLength', 'isLength', 'maxLength', 'minLength'],
              message: 'Use MaxCharacters/MinCharacters (src/common/validation/text-length.ts).',
            },
            // Node 24's readline ends lines at U+2028 and U+2029, which JSON keeps inside
            // strings: it cut dataset items in two on the image's runtime.
            ...['readline', 'node:readline', 'readline/promises', 'node:readline/promises'].map(
              (name) => ({
                name,
                message: 'Use textLines or forEachLine (src/common/text-lines.ts): readline splits JSON lines on Node 24.',
              }),
            ),
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
