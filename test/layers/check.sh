#!/usr/bin/env bash
# The include order of the production code: each layer includes only itself and the
# layers before it (docs/architecture.md, "Layers"):
#   common <- model <- messages <- adapters <- actors <- cmd
# Prints every include that points up the order and fails on any.
# Inside actors/, the folders (controller/, runnerset/, runner/, ...) include
# one another without a cycle: an actor's folder includes those of the actors
# it owns and the protocols they share (actors/protocols.hpp), never its
# owner's. Prints the cycles a depth-first walk of the folder graph finds (at
# least one whenever there is any), one include per arrow, and fails on any.
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

# The folder graph inside actors/: an arrow per folder pair, with the first
# include that makes it; the files directly in actors/ count as one folder.
cycles=$({ grep -rnE '^\s*#\s*include\s+"actors/' actors --include='*.hpp' --include='*.cpp' --include='*.h' || true; } |
  python3 -c '
import re, sys
edges = {}
for line in sys.stdin:
    file, number, text = line.split(":", 2)
    target = re.search(r"\"actors/([^\"]+)\"", text).group(1)
    parts, tparts = file.split("/")[1:], target.split("/")
    src = parts[0] if len(parts) > 1 else "actors/"
    dst = tparts[0] if len(tparts) > 1 else "actors/"
    if src != dst:
        edges.setdefault(src, {}).setdefault(dst, f"{file}:{number}")
found, state, path = set(), {}, []
def visit(node):
    state[node] = "open"
    path.append(node)
    for nxt in sorted(edges.get(node, {})):
        if state.get(nxt) == "open":
            cycle = path[path.index(nxt):]
            start = cycle.index(min(cycle))
            cycle = cycle[start:] + cycle[:start]
            if tuple(cycle) not in found:
                found.add(tuple(cycle))
                arrows = " -> ".join(cycle + [cycle[0]])
                via = ", ".join(edges[a][b] for a, b in zip(cycle, cycle[1:] + cycle[:1]))
                print(f"actors/: folder cycle {arrows} (via {via})")
        elif nxt not in state:
            visit(nxt)
    path.pop()
    state[node] = "done"
for node in sorted(edges):
    if node not in state:
        visit(node)
')

if ((violations > 0)); then
  echo "layers: $violations upward include(s)" >&2
fi
if [[ -n $cycles ]]; then
  echo "$cycles" >&2
  echo "layers: $(wc -l <<<"$cycles") folder cycle(s) inside actors/" >&2
fi
((violations == 0)) && [[ -z $cycles ]] || exit 1
echo "layers: no upward include in ${layers[*]}, no folder cycle inside actors/"
