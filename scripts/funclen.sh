#!/usr/bin/env bash
# usage: scripts/funclen.sh [FOLDER...]   (from the repository root; default: every source folder)
# Function lengths per folder, as universal-ctags sees them: length = end - line + 1 of each
# C function (kind f). Prints, per folder, the count, the median and the 90th percentile
# (nearest rank: the value at position ceil(p * n) of the sorted lengths) and the longest.
# The house target (issue 20): median <= 12 and p90 <= 30 in every folder.
set -euo pipefail
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(sim engine kernels calibration scenarios store study plots cli)
printf '%-12s %6s %6s %6s %6s\n' folder funcs median p90 max
for d in "${dirs[@]}"; do
  ls "$d"/*.c > /dev/null 2>&1 || continue
  ctags --kinds-C=f --fields=+ne -u -f - "$d"/*.c |
    awk -F'\t' '{ l = e = 0
                  for (i = 4; i <= NF; i++) {
                    if ($i ~ /^line:/) l = substr($i, 6)
                    if ($i ~ /^end:/) e = substr($i, 5) }
                  if (l && e) print e - l + 1 }' |
    sort -n |
    awk -v d="$d" '{ v[NR] = $1 }
      END { if (NR == 0) exit
            m = int((NR + 1) / 2); p = int(0.9 * NR); if (p < 0.9 * NR) p++
            printf "%-12s %6d %6d %6d %6d\n", d, NR, v[m], v[p], v[NR] }'
done
