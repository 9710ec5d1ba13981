// ESLint flat config: @eslint/js recommended + typescript-eslint recommended (syntax-only, not type-aware,
// so it stays fast and needs no tsconfig project). Formatting is Prettier's job (see .prettierrc.json);
// none of the enabled rules are stylistic, so the two do not fight.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  // node_modules/ is ignored by default; the rest is build output and local state (as in .gitignore).
  globalIgnores(['dist/', 'data/', '.bench/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    linterOptions: {
      // An eslint-disable comment that no longer suppresses anything is an error, so they don't pile up.
      reportUnusedDisableDirectives: 'error',
    },
    rules: {
      // The codebase names values it must bind but does not use with a leading underscore: callback
      // parameters fixed by an API (`write(chunk, _encoding, callback)`) and properties taken out of an
      // object to drop them (`const { token: _shownOnce, ...stored } = item`). Keep the rule for
      // everything else.
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
);
