import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

/**
 * The web console (docs/operations.md "Web console"), built by `npm run build` from the package
 * root into dist/console and served by the service at /console (src/console/console-static.ts).
 * No inline script or style and no data: URL, so the strict Content-Security-Policy holds; no
 * source maps shipped.
 */
export default defineConfig({
  root: 'console',
  base: '/console/',
  plugins: [preact({ prerender: { enabled: false } })],
  logLevel: 'warn',
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
