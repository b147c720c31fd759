#!/usr/bin/env bash
# The include order of the production code: each layer includes only itself and the
# layers before it (docs/architecture.md, "Layers"):
#   common <- model <- messages <- adapters <- actors <- cmd
# Prints every include that points up the order and fails on any.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

layers=(common model messages adapters actors cmd)
declare -A rank
for i in "${!layers[@]}"; do rank[${layers[$i]}]=$i; done

violations=0
for from in "${layers[@]}"; do
  [[ -d $from ]] || continue
  while IFS=: read -r file line include; do
    target=${include#*\"}
    target=${target%%/*}
    [[ -n ${rank[$target]+x} ]] || continue  # a system or third-party header
    if ((rank[$target] > rank[$from])); then
      echo "$file:$line: $from/ includes $target/ (upward: ${layers[*]})" >&2
      violations=$((violations + 1))
    fi
  done < <(grep -rnE '^\s*#\s*include\s+"' "$from" --include='*.hpp' --include='*.cpp' --include='*.h' |
    sed -E 's/^([^:]+):([0-9]+):.*#\s*include\s+"([^"]+)".*/\1:\2:"\3/')
done

if ((violations > 0)); then
  echo "layers: $violations upward include(s)" >&2
  exit 1
fi
echo "layers: no upward include in ${layers[*]}"
