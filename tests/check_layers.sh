#!/bin/bash
# scripts/check-layers, checked: the library as built passes, and a seeded
# upward include, a seeded cycle of two units and a stale allow-list entry
# each fail (so the check can fail).  $1 = source folder, $2.. = objects.
set -u
src=$1; shift
py=/usr/bin/python3
"$py" "$src/scripts/check-layers" --report "$@" || { echo "FAIL: the library breaks its layers"; exit 1; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/sim/include/wattsim" "$tmp/sim/src/io" "$tmp/sim/src/report"
# the checker with empty allow-lists and no adapters (the seeded tree has
# none of the library's cycles nor its python/bridge.c)
/usr/bin/python3 - "$src/scripts/check-layers" "$tmp/scripts/check-layers" <<'PY' || exit 1
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r"^(ALLOWED_(CYCLES|UP) = \[)\n.*?^\]", r"\1\n]", s, flags=re.S | re.M)
s = re.sub(r"^(ADAPTERS = \{)\n.*?^\}", r"\1\n}", s, flags=re.S | re.M)
open(sys.argv[2], "w").write(s)
PY
echo 'int ws_report_x(void);' > "$tmp/sim/include/wattsim/report.h"
printf '#include "wattsim/report.h"\nint ws_a(void) { return ws_report_x(); }\n' > "$tmp/sim/src/io/a.c"
out=$(WS_LAYERS_ROOT=$tmp "$py" "$tmp/scripts/check-layers"); rc=$?
[ $rc = 1 ] && grep -q 'sim/src/io/a.c:1: layer io includes wattsim/report.h of layer report' <<<"$out" \
  || { echo "FAIL: an upward include passed (rc $rc): $out"; exit 1; }

rm "$tmp/sim/src/io/a.c"

# An adapter outside sim/src/ (python/bridge.c) is held to its layer too.
mkdir -p "$tmp/python"
printf '#include "wattsim/report.h"\n' > "$tmp/python/bridge.c"
sed -i 's|^ADAPTERS = {$|&\n    "python/bridge.c": "engine",|' "$tmp/scripts/check-layers"
out=$(WS_LAYERS_ROOT=$tmp "$py" "$tmp/scripts/check-layers"); rc=$?
[ $rc = 1 ] && grep -q 'python/bridge.c:1: layer engine includes wattsim/report.h of layer report' <<<"$out" \
  || { echo "FAIL: an adapter's upward include passed (rc $rc): $out"; exit 1; }
rm "$tmp/python/bridge.c"
out=$(WS_LAYERS_ROOT=$tmp "$py" "$tmp/scripts/check-layers"); rc=$?
[ $rc = 1 ] && grep -q 'adapter python/bridge.c does not exist' <<<"$out" \
  || { echo "FAIL: a stale adapter entry passed (rc $rc): $out"; exit 1; }
sed -i '/^    "python\/bridge.c": "engine",$/d' "$tmp/scripts/check-layers"
mkdir -p "$tmp/o/src/io"
printf 'int ws_b(int);\nint ws_a(int n) { return n ? ws_b(n - 1) : 0; }\n' > "$tmp/a.c"
printf 'int ws_a(int);\nint ws_b(int n) { return n ? ws_a(n - 1) : 1; }\n' > "$tmp/b.c"
cc -c "$tmp/a.c" -o "$tmp/o/src/io/a.c.o" && cc -c "$tmp/b.c" -o "$tmp/o/src/io/b.c.o" || exit 1
out=$(WS_LAYERS_ROOT=$tmp "$py" "$tmp/scripts/check-layers" --objects "$tmp/o"); rc=$?
[ $rc = 1 ] && grep -q 'cycle of 2 units that call each other: io/a.c io/b.c' <<<"$out" \
  || { echo "FAIL: a cycle passed (rc $rc): $out"; exit 1; }

sed -i 's|^ALLOWED_CYCLES = \[$|&\n    ["io/a.c", "io/b.c"], ["io/x.c", "io/y.c"],|' "$tmp/scripts/check-layers"
out=$(WS_LAYERS_ROOT=$tmp "$py" "$tmp/scripts/check-layers" --objects "$tmp/o"); rc=$?
[ $rc = 1 ] && grep -q 'allowed cycle io/x.c io/y.c no longer exists' <<<"$out" \
  && ! grep -q 'io/a.c io/b.c: make' <<<"$out" \
  || { echo "FAIL: the allow-list was not applied exactly (rc $rc): $out"; exit 1; }
# A private header whose inline body calls back into a unit that includes
# it (host.h and plugin.c were so): nm sees one arrow, the check a cycle.
rm -f "$tmp"/o/src/io/*.o
printf 'int ws_d_slow(int);\nstatic inline int d_fast(int n) { return n > 9 ? ws_d_slow(n) : n; }\n' \
  > "$tmp/sim/src/io/h.h"
printf '#include "h.h"\nint ws_d_slow(int n) { return n - 1; }\nint ws_d(int n) { return d_fast(n); }\n' \
  > "$tmp/sim/src/io/d.c"
cc -c -I"$tmp/sim/src/io" "$tmp/sim/src/io/d.c" -o "$tmp/o/src/io/d.c.o" || exit 1
sed -i '/"io\/a.c", "io\/b.c"/d' "$tmp/scripts/check-layers"
out=$(WS_LAYERS_ROOT=$tmp "$py" "$tmp/scripts/check-layers" --objects "$tmp/o"); rc=$?
[ $rc = 1 ] && grep -q 'cycle of 2 units that call each other: io/d.c io/h.h' <<<"$out" \
  || { echo "FAIL: a header calling back into its includer passed (rc $rc): $out"; exit 1; }
echo "layers: ok"
