#!/usr/bin/env bash
# A Debian source package's upstream tarball, pinned, for tests that run
# upstream's own test material without committing it (tests/oci/bats/run.sh:
# runc's bats suite; tests/oci/cri/api.sh: Kubernetes' CRI proto):
#
#   tests/oci/debian-source.sh PACKAGE DEB_VERSION ORIG SHA256 CACHEDIR
#
# leaves CACHEDIR/ORIG, checked against SHA256 (a cached copy that matches
# is kept).  apt's own configuration is left alone: a sources file, lists
# and download directory of this script's own (apt checks the signed index,
# the index names the .dsc, the .dsc the tarball; the pin checks again).
# Exits 2 on any failure, saying why.
set -euo pipefail
pkg=$1 deb_version=$2 orig=$3 sha=$4 cache=$5
mkdir -p "$cache"
if [ -f "$cache/$orig" ] && echo "$sha  $cache/$orig" | sha256sum -c --quiet 2>/dev/null; then
  exit 0
fi
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb-src\nURIs: http://security.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$d/src.sources"
mkdir -p "$d/lists/partial"
opts=(-o Dir::Etc::sourcelist="$d/src.sources" -o Dir::Etc::sourceparts=- -o Dir::State::Lists="$d/lists")
apt-get "${opts[@]}" -qq update >"$d/update.log" 2>&1 || { cat "$d/update.log" >&2; exit 2; }
(cd "$d" && apt-get "${opts[@]}" -qq source --download-only "$pkg=$deb_version" >"$d/source.log" 2>&1) \
  || (cd "$d" && apt-get "${opts[@]}" -qq source --download-only "$pkg" >"$d/source.log" 2>&1) \
  || { cat "$d/source.log" >&2; exit 2; }
dsc=$(ls "$d/${pkg}"_*.dsc)
grep -q " $sha [0-9]* $orig\$" "$dsc" || { echo "debian-source: $dsc does not list $orig with the pinned SHA-256" >&2; exit 2; }
echo "$sha  $d/$orig" | sha256sum -c --quiet || { echo "debian-source: $orig does not match its pinned SHA-256" >&2; exit 2; }
mv "$d/$orig" "$cache/$orig"
