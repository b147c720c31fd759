# Sourced by the scripts that build a pinned Go tool the tests need
# (test/tools/*/build.sh, test/controlplane/build*.sh): the one implementation
# of the build cache they share. A tool's outputs are build outputs: they live
# under ~/.cache/octorun/NAME/KEY/bin (OCTORUN_CACHE or XDG_CACHE_HOME move it),
# KEY a hash of the pins, the calling script and this file, so a tool is
# rebuilt only when one of those changes; builds are serialised per tool with
# flock.
#
#   go_cache_begin NAME PRINT KEYFILE... -- OUTPUT...
#     PRINT: "dir" (print the bin folder) or the output whose path to print.
#     When every OUTPUT is in the cache: prints and exits the script with 0.
#     Else: holds the tool's lock, checks and sets up Go (1.26: an older go
#     1.21+ fetches that toolchain from the module proxy), and leaves
#     go_cache_bin (the final folder) and go_cache_tmp (an empty folder to
#     build into) set for the caller.
#   go_cache_commit
#     Moves the build into place and prints as go_cache_begin would.

go_cache_lib=${BASH_SOURCE[0]}

go_cache_print() {
  if [[ $go_cache_print_what == dir ]]; then echo "$go_cache_bin"; else echo "$go_cache_bin/$go_cache_print_what"; fi
}

go_cache_built() {
  local f
  for f in "${go_cache_outputs[@]}"; do [[ -s "$go_cache_bin/$f" ]] || return 1; done
}

go_cache_begin() {
  local name=$1
  go_cache_print_what=$2
  shift 2
  local keyfiles=()
  while (($#)) && [[ $1 != -- ]]; do keyfiles+=("$1"); shift; done
  shift
  go_cache_outputs=("$@")
  local root=${OCTORUN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/octorun}
  local key
  key=$(cat "${keyfiles[@]}" "$go_cache_lib" | sha256sum | cut -c1-16)
  go_cache_bin="$root/$name/$key/bin"
  if go_cache_built; then go_cache_print; exit 0; fi

  # One build at a time per machine: concurrent callers wait for the first.
  mkdir -p "$root/$name"
  exec 9>"$root/$name/.lock"
  flock 9
  if go_cache_built; then go_cache_print; exit 0; fi

  command -v go >/dev/null || { echo "$name: Go (1.26 or newer) is required to build it" >&2; exit 1; }
  export CGO_ENABLED=0 GOFLAGS=-mod=readonly
  local go_minor
  go_minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
  if ((go_minor >= 26)); then export GOTOOLCHAIN=local; else export GOTOOLCHAIN=go1.26.8; fi
  go_cache_tmp="$go_cache_bin.tmp"
  rm -rf "$go_cache_tmp"
  mkdir -p "$go_cache_tmp"
}

go_cache_commit() {
  rm -rf "$go_cache_bin"
  mv "$go_cache_tmp" "$go_cache_bin"
  go_cache_print
}

# The version go.mod in DIR pins for MODULE, checked against REGEX.
go_module_version() {
  local v
  v=$(awk -v m="$2" '$1 == m { print $2; exit }' "$1/go.mod")
  [[ $v =~ $3 ]] || { echo "cannot read the $2 version from $1/go.mod" >&2; return 1; }
  echo "$v"
}
