#!/usr/bin/env bash
# Builds the manager's OCI image from Debian bookworm packages only; nothing is
# pulled from a registry.
#   scripts/image.sh [--tag octorun:VERSION] [--output FILE] [--build-dir DIR] [--refresh-base]
#                    [--base-max-age DAYS]
#     --tag         image name and tag (default: octorun:<project version>, the chart's default)
#     --output      the OCI archive to write (default: <build dir>/octorun-<tag>.oci.tar)
#     --build-dir   take the manager from this existing CMake build tree (e.g. the
#                   test build) instead of building it in build-image/
#     --refresh-base  download the Debian packages again now (a release does)
#     --base-max-age  download them again when the cached base is older (default 7 days)
# The last line on stdout is the archive's path; beside it, FILE.spdx.json is
# the image's SBOM (also in the image at /usr/share/doc/octorun/sbom.spdx.json).
# It loads with
#   ctr -n k8s.io images import FILE     (named docker.io/library/<name>:<tag>)
#   skopeo copy oci-archive:FILE ...     (or podman load -i FILE)
#
# How: the manager and its OpenSSL compat shims are installed (cmake --install)
# into a root filesystem; the Debian packages owning every library the binary
# loads (found with ldd + dpkg -S, not listed by hand) plus ca-certificates are
# unpacked there with `mmdebstrap --variant=extract` (no maintainer scripts, no
# shell), then everything the binary does not need at run time (docs, programs,
# gconv modules, device nodes) is removed. The image's own loader then lists the
# binary's libraries inside that root (chroot), and the build fails if one does
# not resolve there. umoci turns the root into a one-layer OCI image run as
# 65532:65532; it works with a read-only root filesystem (the manager writes only
# --admission-cert-dir, an emptyDir in a pod).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

tag="" output="" build_dir="" refresh_base=0 base_max_age_days=7
while [[ $# -gt 0 ]]; do
  case $1 in
  --tag) tag=$2; shift 2 ;;
  --output) output=$2; shift 2 ;;
  --build-dir) build_dir=$2; shift 2 ;;
  --refresh-base) refresh_base=1; shift ;;
  --base-max-age) base_max_age_days=$2; shift 2 ;;
  -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
  *) echo "image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
log() { echo "image.sh: $*" >&2; }
fail() { echo "image.sh: error: $*" >&2; exit 1; }
[[ $base_max_age_days =~ ^[0-9]+$ ]] || fail "--base-max-age takes whole days, got $base_max_age_days"
[[ $(id -u) -eq 0 ]] || fail "needs root (mmdebstrap's root mode, chroot, file owners in the image)"

scripts/install-deps.sh
for tool in mmdebstrap umoci dpkg-query chroot python3; do
  command -v "$tool" >/dev/null || fail "$tool is missing (scripts/install-deps.sh installs it)"
done

# 1. The manager. RelWithDebInfo (-O2), stripped at install: the flags the test
# build uses, so ccache shares objects with it, and gcc 12's -O3 reports a false
# -Werror=restrict in std::string concatenation (adapters/kube/api.cpp).
if [[ -z $build_dir ]]; then
  build_dir=$root/build-image
  launcher=()
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOCTORUN_BUILD_TESTS=OFF -DOCTORUN_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
fi
build_dir=$(cd "$build_dir" && pwd)
cmake --build "$build_dir" -j"$(nproc)" --target octorun >&2

version=$(sed -n 's/^CMAKE_PROJECT_VERSION:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
[[ -n $version ]] || fail "no project version in $build_dir/CMakeCache.txt"
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)
source_url=$(git -C "$root" remote get-url origin 2>/dev/null || echo https://github.com/octorun/octorun)
tag=${tag:-octorun:$version}
name=${tag%:*} ref=${tag##*:}
[[ $tag == *:* && -n $name && -n $ref && $ref != */* ]] || fail "--tag must be NAME:TAG, got $tag"
# The name containerd (and so the kubelet) gives the image: Docker's normalisation.
first=${name%%/*}
if [[ $name != */* ]]; then
  full_name=docker.io/library/$name
elif [[ $first == *.* || $first == *:* || $first == localhost ]]; then
  full_name=$name
else
  full_name=docker.io/$name
fi
output=${output:-$build_dir/octorun-$ref.oci.tar}
mkdir -p "$(dirname "$output")"
output=$(cd "$(dirname "$output")" && pwd)/$(basename "$output")

work=$build_dir/image
rm -rf "$work"
mkdir -p "$work/install"
DESTDIR=$work/install cmake --install "$build_dir" --component manager --prefix /usr --strip >/dev/null
binary=$work/install/usr/bin/octorun
[[ -x $binary ]] || fail "cmake --install put no manager at $binary"

# 2. The Debian packages owning what the binary loads (the host's loader resolves
# the same libraries the build linked; the shims resolve inside the install tree).
ldd_out=$(ldd "$binary") || fail "ldd $binary failed"
if grep -q 'not found' <<<"$ldd_out"; then fail "unresolved libraries on the build host:
$ldd_out"; fi
mapfile -t libs < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' <<<"$ldd_out" |
  grep -v "^$work/")
# dpkg records a path as the package ships it (/lib or /usr/lib on a merged-/usr
# host), so ask for each library as found, resolved, and with /usr on and off:
# one dpkg-query for them all (it reads every package's file list per call).
candidates_of() { local f; for f in "$1" "$(readlink -f "$1")"; do echo "$f" "${f#/usr}" "/usr$f"; done; }
declare -A owner=()
while IFS= read -r line; do
  [[ $line == *": /"* ]] || continue # "pkg[:arch][, pkg2...]: /path"
  pkg=${line%%: /*}
  pkg=${pkg%%,*}
  owner[/${line#*: /}]=${pkg%%:*}
done < <(for lib in "${libs[@]}"; do candidates_of "$lib"; done | xargs dpkg-query -S 2>/dev/null || true)
packages=(ca-certificates)
for lib in "${libs[@]}"; do
  pkg=""
  for c in $(candidates_of "$lib"); do pkg=${pkg:-${owner[$c]:-}}; done
  [[ -n $pkg ]] || fail "no Debian package owns $lib (a library not from Debian?)"
  packages+=("$pkg")
done
mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
log "Debian packages: ${packages[*]}"

# 3. The base: those packages (and what they depend on) from the bookworm mirror
# with its updates and security fixes, cached per package list.
mirrors=(
  "deb http://deb.debian.org/debian bookworm main"
  "deb http://deb.debian.org/debian bookworm-updates main"
  "deb http://deb.debian.org/debian-security bookworm-security main"
)
# mmdebstrap collects the downloaded packages through an apt hook `cat >&N`
# run by sh (dash), which reads single-digit descriptors only: when N is 10 or
# more — our caller left descriptors open for us, as a test harness's popen()
# does — every download fails with "Sub-process cat >&15 returned an error
# code (2)". So it runs with none open above stderr.
without_inherited_fds() {
  local fd
  for fd in /proc/self/fd/*; do
    fd=${fd##*/}
    if ((fd > 2 && fd != 255)); then eval "exec $fd>&-"; fi
  done
  "$@"
}
manifest=usr/share/doc/octorun/debian-packages
cache=${XDG_CACHE_HOME:-$HOME/.cache}/octorun/image-base
# (The last line names the base's layout: bases cached before it held a
# package manifest are not reused.)
key=$(printf '%s\n' "${packages[@]}" "${mirrors[@]}" "manifest: $manifest" | sha256sum | cut -c1-16)
base=$cache/bookworm-$key.tar
mkdir -p "$cache"
# One download at a time per machine (concurrent image builds wait for it);
# a failed download (a mirror's hiccup) is tried again before giving up.
exec 8>"$cache/.lock"
flock 8
# Security fixes reach the image on a schedule, not only when asked: a base
# older than --base-max-age is downloaded again by whatever build comes next.
stale=0
if [[ -s $base ]] && (($(date +%s) - $(stat -c %Y "$base") > base_max_age_days * 86400)); then
  stale=1
  log "the cached Debian base is older than $base_max_age_days days: downloading it again"
fi
if [[ $refresh_base -eq 1 || $stale -eq 1 || ! -s $base ]]; then
  log "unpacking the Debian packages with mmdebstrap (once per package list)"
  # Its own log (apt's reasons included), shown only when an attempt fails;
  # a mirror's hiccup is tried again, over about five minutes. The extract
  # hook records what was unpacked (the extract variant leaves dpkg's status
  # empty): one "package version architecture source" line per .deb.
  attempts=5
  for attempt in $(seq $attempts); do
    rm -f "$base.partial.tar"
    (without_inherited_fds mmdebstrap --variant=extract --include="$(IFS=,; echo "${packages[*]}")" \
      --extract-hook='mkdir -p "$1/'"${manifest%/*}"'" && for deb in "$1"/var/cache/apt/archives/*.deb; do
        dpkg-deb --showformat="\${Package} \${Version} \${Architecture} \${source:Package}\n" --show "$deb"
        done >"$1/'"$manifest"'"' \
      bookworm "$base.partial.tar" "${mirrors[@]}") >"$cache/mmdebstrap.log" 2>&1 && break
    grep -E '^(E|W): |Err:|Failed|failed' "$cache/mmdebstrap.log" | grep -v 'skipping mounting' | tail -20 >&2
    [[ $attempt -lt $attempts ]] || fail "mmdebstrap failed $attempts times (its log: $cache/mmdebstrap.log)"
    wait_s=$((attempt * attempt * 10))
    log "mmdebstrap failed (attempt $attempt of $attempts); trying again in $wait_s s"
    sleep $wait_s
  done
  mv "$base.partial.tar" "$base"
fi
# Bases of other package lists (an older manager) go once they are stale too.
find "$cache" -maxdepth 1 -name 'bookworm-*.tar' ! -name "${base##*/}" -mtime "+$base_max_age_days" -delete
flock -u 8

rootfs=$work/rootfs
mkdir -p "$rootfs"
tar -C "$rootfs" -xf "$base"
[[ -s $rootfs/$manifest ]] || fail "the Debian base $base has no package manifest ($manifest)"
mv "$rootfs/$manifest" "$work/debian-packages"
base_date=$(date -u -d "@$(stat -c %Y "$base")" +%Y-%m-%dT%H:%M:%SZ)
# Keep each package's copyright file (its licence), drop the rest of the docs.
find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
# The CA bundle update-ca-certificates would write (libcurl's default CAINFO).
mkdir -p "$rootfs/etc/ssl/certs"
find "$rootfs/usr/share/ca-certificates" -name '*.crt' | LC_ALL=C sort |
  while read -r crt; do cat "$crt"; [[ $(tail -c1 "$crt") == "" ]] || echo; done \
  >"$rootfs/etc/ssl/certs/ca-certificates.crt"
[[ -s $rootfs/etc/ssl/certs/ca-certificates.crt ]] || fail "no CA certificates in ca-certificates"
# No programs, no shell, no package manager state, no device nodes (the runtime
# mounts /dev; and /etc/hosts, hostname, resolv.conf), no iconv modules or
# translations (nothing here converts charsets), no apt or dpkg configuration.
rm -rf "${rootfs:?}"/{bin,sbin,usr/bin,usr/sbin,usr/games,usr/libexec,var,dev,run,home,root,opt,srv,mnt,media} \
  "$rootfs"/usr/share/{man,info,locale,lintian,bash-completion,gdb,perl5,debconf,pixmaps,gcc,menu,ca-certificates} \
  "$rootfs"/usr/lib/x86_64-linux-gnu/gconv "$rootfs"/usr/lib/ssl/misc \
  "$rootfs"/etc/{debconf.conf,ca-certificates.conf,ca-certificates,apt,dpkg,fstab,hostname,resolv.conf}
mkdir -p "$rootfs"/{dev,proc,sys,tmp,run,var/tmp,home/nonroot,usr/bin} "$rootfs/etc"
chmod 1777 "$rootfs/tmp" "$rootfs/var/tmp"
chown 65532:65532 "$rootfs/home/nonroot"
chmod 0700 "$rootfs/home/nonroot"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' \
  >"$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
cp -a "$work/install/." "$rootfs/"

# 4. Every library resolves inside the image, through the image's own loader,
# and the binary starts there as the image's user.
loader=$(readelf -l "$binary" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
[[ -e $rootfs$loader ]] || fail "the image has no program interpreter $loader"
listed=$(chroot "$rootfs" "$loader" --list /usr/bin/octorun 2>&1) ||
  fail "the image's loader cannot load the manager:
$listed"
if grep -q 'not found' <<<"$listed"; then fail "libraries missing from the image:
$listed"; fi
grep -q '/lib/octorun/libssl.so ' <<<"$listed" || fail "the OpenSSL compat shim is not loaded from the image:
$listed"
# (In a mount namespace of its own with /proc: the loader finds $ORIGIN there.)
unshare --fork --pid --mount-proc="$rootfs/proc" \
  chroot --userspec=65532:65532 "$rootfs" /usr/bin/octorun --help >/dev/null ||
  fail "octorun --help fails inside the image's root filesystem"

# 5. The SBOM (SPDX 2.3): the manager and every Debian package unpacked into
# the image, each with its version and a purl, so a scanner can match them to
# Debian's security tracker without opening the image.
sbom=$work/sbom.spdx.json
python3 - "$work/debian-packages" "$version" "$revision" "$source_url" "$base_date" >"$sbom" <<'EOF'
import datetime, hashlib, json, re, sys, urllib.parse
packages_file, version, revision, source_url, base_date = sys.argv[1:]
def spdx_id(kind, name): return "SPDXRef-" + kind + "-" + re.sub(r"[^A-Za-z0-9.-]", "-", name)
manager = {
    "name": "octorun", "SPDXID": "SPDXRef-Package-octorun", "versionInfo": version,
    "downloadLocation": source_url, "filesAnalyzed": False,
    "licenseConcluded": "Apache-2.0", "licenseDeclared": "Apache-2.0", "copyrightText": "NOASSERTION",
    "sourceInfo": "built from commit " + revision,
    "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                      "referenceLocator": "pkg:generic/octorun@" + urllib.parse.quote(version, safe="")}],
}
packages, relationships = [manager], [
    {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": manager["SPDXID"]}]
for line in open(packages_file):
    fields = line.split()
    if not fields: continue
    if len(fields) != 4: sys.exit("image.sh: malformed package manifest line: " + line.strip())
    name, ver, arch, source = fields
    purl = "pkg:deb/debian/%s@%s?arch=%s&distro=debian-12" % (name, urllib.parse.quote(ver, safe=".~-_"), arch)
    if source != name: purl += "&upstream=" + urllib.parse.quote(source, safe="")
    packages.append({
        "name": name, "SPDXID": spdx_id("Package-deb", name), "versionInfo": ver,
        "supplier": "Organization: Debian", "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
        "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION", "copyrightText": "NOASSERTION",
        "sourceInfo": "Debian source package " + source,
        "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl", "referenceLocator": purl}],
    })
    relationships.append({"spdxElementId": manager["SPDXID"], "relationshipType": "DEPENDS_ON",
                          "relatedSpdxElement": packages[-1]["SPDXID"]})
if len(packages) < 2: sys.exit("image.sh: the package manifest lists no Debian package")
digest = hashlib.sha256(json.dumps(packages, sort_keys=True).encode()).hexdigest()[:16]
print(json.dumps({
    "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
    "name": "octorun-" + version + "-image",
    "documentNamespace": "https://octorun.io/spdx/octorun-%s-%s-%s" % (version, revision[:12], digest),
    "creationInfo": {"created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                     "creators": ["Tool: octorun-scripts/image.sh"],
                     "comment": "Debian bookworm packages downloaded " + base_date},
    "packages": packages, "relationships": relationships,
}, indent=1))
EOF
mkdir -p "$rootfs/usr/share/doc/octorun"
cp "$sbom" "$rootfs/usr/share/doc/octorun/sbom.spdx.json"

# 6. The OCI image: one layer, run as nonroot, the manager as entrypoint.
layout=$work/oci
rootfs_bytes=$(du -s --apparent-size -B1 "$rootfs" | cut -f1)
umoci init --layout "$layout"
umoci new --image "$layout:$ref"
umoci unpack --image "$layout:$ref" "$work/bundle" >/dev/null
rm -rf "$work/bundle/rootfs"
mv "$rootfs" "$work/bundle/rootfs"
umoci repack --image "$layout:$ref" --history.created_by "scripts/image.sh ($revision)" "$work/bundle"
umoci config --image "$layout:$ref" --config.user 65532:65532 --config.entrypoint /usr/bin/octorun \
  --config.workingdir / --config.env PATH=/usr/bin \
  --config.label "org.opencontainers.image.title=octorun" \
  --config.label "org.opencontainers.image.description=Octorun manager: GitHub Actions self-hosted runners as Kubernetes pods" \
  --config.label "org.opencontainers.image.version=$version" \
  --config.label "org.opencontainers.image.revision=$revision" \
  --config.label "org.opencontainers.image.source=$source_url" \
  --config.label "org.opencontainers.image.licenses=Apache-2.0"
umoci gc --layout "$layout"
# ctr names an imported OCI image by io.containerd.image.name (else it drops the
# bare tag in org.opencontainers.image.ref.name); set the full normalised name.
python3 - "$layout/index.json" "$full_name:$ref" <<'EOF'
import json, sys
path, name = sys.argv[1], sys.argv[2]
index = json.load(open(path))
for m in index["manifests"]:
    m.setdefault("annotations", {})["io.containerd.image.name"] = name
json.dump(index, open(path, "w"), separators=(",", ":"))
EOF
rm -rf "$work/bundle"
tar -C "$layout" -cf "$output.partial" oci-layout index.json blobs
mv "$output.partial" "$output"
cp "$sbom" "$output.spdx.json"

layer=$(python3 - "$layout" <<'EOF'
import json, os, sys
layout = sys.argv[1]
def blob(d): return os.path.join(layout, "blobs", *d["digest"].split(":"))
manifest = json.load(open(blob(json.load(open(os.path.join(layout, "index.json")))["manifests"][0])))
print(sum(l["size"] for l in manifest["layers"]))
EOF
)
log "image $full_name:$ref (version $version, revision $revision):" \
  "$((rootfs_bytes / 1000)) kB unpacked, $((layer / 1000)) kB compressed"
echo "$output"
