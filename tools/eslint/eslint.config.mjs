// ESLint for the app's browser code (empathy_app/static) and the Node scripts beside it, with the recommended
// rules. tests/test_keyqueue_static.py runs it from the repository's root (with --config, file patterns are
// relative to the working directory):
//   node tools/eslint/node_modules/eslint/bin/eslint.js --config tools/eslint/eslint.config.mjs --max-warnings 0 \
//     empathy_app/static tests/keyqueue_live.mjs tools/eslint/eslint.config.mjs
import js from '@eslint/js';
import globals from 'globals';

export default [
  js.configs.recommended,
  {
    files: ['empathy_app/static/**/*.js'],
    languageOptions: {ecmaVersion: 2022, sourceType: 'module', globals: {...globals.browser}},
  },
  {
    files: ['tests/**/*.mjs', 'tools/**/*.mjs'],
    languageOptions: {ecmaVersion: 2022, sourceType: 'module', globals: {...globals.node}},
  },
  {
    linterOptions: {reportUnusedDisableDirectives: 'error'},
  },
];
