#!/usr/bin/env bash
# The format check (ctest `format.check`): every tracked C/C++ file is as
# Debian's clang-format formats it with the repository's .clang-format.
# Prints the files that are off and the command that fixes them.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
if ! command -v clang-format >/dev/null; then
  echo "format check: clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
fi
# Tracked files only, so build folders and generated files are never checked.
mapfile -d '' files < <(git ls-files -z -- '*.cpp' '*.hpp' '*.h' '*.c')
if [ "${#files[@]}" -eq 0 ]; then
  echo "format check: no tracked C/C++ files under $root (not a git checkout?)" >&2
  exit 1
fi
report=$(clang-format --dry-run -Werror --ferror-limit=1 "${files[@]}" 2>&1) && exit 0
mapfile -t off < <(sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$report" |
  sort -u)
if [ "${#off[@]}" -eq 0 ]; then  # clang-format failed for another reason: show it
  echo "$report" >&2
  exit 1
fi
echo "format check: ${#off[@]} file(s) not clang-formatted ($(clang-format --version)):" >&2
printf '  %s\n' "${off[@]}" >&2
echo "fix with: clang-format -i ${off[*]}" >&2
exit 1
