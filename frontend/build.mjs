// Bundles the browser code into static/dist/ (not committed; `make setup` builds it from the
// committed lock file). axe-core is copied for the accessibility checks in the browser tests.
import { build } from "esbuild";
import { copyFileSync, mkdirSync } from "node:fs";

mkdirSync("static/dist", { recursive: true });
await build({
  entryPoints: ["src/learn.js"],
  bundle: true,
  format: "esm",
  minify: true,
  sourcemap: true,
  target: ["es2020"],
  outfile: "static/dist/learn.js",
});
// The admin's authoring pages: the learners' editor module, bundled for the admin (a classic
// script, as the admin's own scripts are).
await build({
  entryPoints: ["src/admin.js"],
  bundle: true,
  format: "iife",
  minify: true,
  sourcemap: true,
  target: ["es2020"],
  outfile: "static/dist/admin.js",
});
copyFileSync("node_modules/axe-core/axe.min.js", "static/dist/axe.min.js");
