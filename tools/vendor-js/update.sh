#!/usr/bin/env bash
# Rebuild arbiter/static/*.js, the chart library inlined into report.html, from the
# versions pinned in package-lock.json (integrity-checked by npm ci).  Run it after
# changing package.json (then `npm install --package-lock-only` first) and commit
# the result: installing the arena never needs npm.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --ignore-scripts --no-audit --no-fund
static=../../arbiter/static
mkdir -p "$static"
copy() {  # the minified UMD build, without the source-map comment (no map is shipped)
  local pkg=${1%%/*}
  if ! head -c 3 "node_modules/$1" | grep -q '/\*!'; then
    # Keep the copyright notice the license asks for when the build has none.
    node -p "const p = require('./node_modules/$pkg/package.json');
      '/*! ' + p.name + ' v' + p.version + ' | ' + p.license + ' License | (c) ' +
      (typeof p.author === 'object' ? p.author.name : p.author) + ' */'" > "$static/$2"
  else
    : > "$static/$2"
  fi
  grep -v '^//# sourceMappingURL=' "node_modules/$1" >> "$static/$2"
  { echo "== $pkg"; cat "node_modules/$pkg/LICENSE"*; echo; } >> "$static/LICENSES"
}
: > "$static/LICENSES"
copy chart.js/dist/chart.umd.min.js chart.umd.min.js
copy chartjs-chart-error-bars/build/index.umd.min.js chartjs-chart-error-bars.min.js
copy chartjs-chart-matrix/dist/chartjs-chart-matrix.min.js chartjs-chart-matrix.min.js
for p in chart.js chartjs-chart-error-bars chartjs-chart-matrix; do
  echo "$p $(node -p "require('./node_modules/$p/package.json').version")"
done > "$static/VERSIONS"
rm -rf node_modules
