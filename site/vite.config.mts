import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

/**
 * The public leaderboard site (docs/operations.md "Leaderboard site"), built by `npm run build`
 * from the package root into dist/site and served by the service at SITE_PATH when SITE_ENABLED
 * is true (src/site/site-static.ts). Relative asset URLs (base './'), so the operator's SITE_PATH
 * needs no rebuild. No inline script or style and no data: URL (strict Content-Security-Policy);
 * no source maps shipped.
 */
export default defineConfig({
  root: 'site',
  base: './',
  plugins: [preact({ prerender: { enabled: false } })],
  logLevel: 'warn',
  build: {
    outDir: '../dist/site',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    modulePreload: { polyfill: false },
    target: 'es2022',
  },
});
