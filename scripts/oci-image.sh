#!/usr/bin/env bash
# oci-image.sh — a local busybox image for trying mxc-oci under Podman or
# containerd, made from Debian's busybox-static (/bin/busybox; installed by
# scripts/deps.sh): nothing is pulled.  The image is the rootfs the tests use
# (tests/oci/test_oci.py make_rootfs: busybox and its applets in /bin, empty
# /proc /dev /sys /tmp /etc), Cmd sh, PATH=/bin.
#
#   scripts/oci-image.sh podman [NAME]       podman import of a rootfs tar
#   scripts/oci-image.sh containerd [NAME]   ctr image import of an OCI image
#                                            layout archive (tests/oci/test_containerd.py
#                                            write_oci_image), into ctr's namespace
#                                            (CONTAINERD_NAMESPACE, default "default")
#                                            and containerd's default snapshotter;
#                                            CONTAINERD_ADDRESS names another daemon
#
# NAME defaults to localhost/mxc-bb:1.  Prints the image's name on stdout (so
# IMAGE=$(scripts/oci-image.sh podman) works); everything else goes to stderr.
set -euo pipefail
engine=${1:-}
name=${2:-localhost/mxc-bb:1}
busybox=/bin/busybox
case "$engine" in podman | containerd) ;; *)
    echo "usage: $0 podman|containerd [NAME]" >&2; exit 2 ;;
esac
if ! [ -x "$busybox" ] || ! "$busybox" --list >/dev/null 2>&1; then
    echo "oci-image.sh: $busybox is not Debian's busybox-static: apt-get install busybox-static" >&2
    exit 1
fi
case "$name" in *:*) ;; *) name=$name:latest ;; esac
work=$(mktemp -d /var/tmp/mxc-oci-image-XXXXXX)
trap 'rm -rf "$work"' EXIT

# the rootfs, every file root's
root=$work/rootfs
mkdir -p "$root/bin" "$root/proc" "$root/dev" "$root/sys" "$root/etc"
install -d -m 1777 "$root/tmp"
cp "$busybox" "$root/bin/busybox"
for a in $("$busybox" --list); do
    [ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
done
layer=$work/layer.tar
tar -C "$root" --owner=0 --group=0 --numeric-owner --sort=name -cf "$layer" .

if [ "$engine" = podman ]; then
    podman import --change 'CMD ["sh"]' --change 'ENV PATH=/bin' "$layer" "$name" >/dev/null
    echo "$name"
    exit 0
fi

# containerd: an OCI image layout (one uncompressed layer), as an archive
lay=$work/layout
mkdir -p "$lay/blobs/sha256"
blob() { # blob FILE: stored under its digest; prints "sha256:HEX SIZE"
    local d s
    d=$(sha256sum "$1" | cut -d' ' -f1)
    s=$(stat -c %s "$1")
    cp "$1" "$lay/blobs/sha256/$d"
    echo "sha256:$d $s"
}
arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
read -r ldig lsize < <(blob "$layer")
printf '{"architecture":"%s","os":"linux","config":{"Env":["PATH=/bin"],"Cmd":["sh"]},"rootfs":{"type":"layers","diff_ids":["%s"]}}' \
    "$arch" "$ldig" > "$work/config.json"
read -r cdig csize < <(blob "$work/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":%s}]}' \
    "$cdig" "$csize" "$ldig" "$lsize" > "$work/manifest.json"
read -r mdig msize < <(blob "$work/manifest.json")
printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$mdig" "$msize" "$name" "${name##*:}" > "$lay/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' > "$lay/oci-layout"
tar -C "$lay" -cf "$work/image.tar" .
ctr ${CONTAINERD_ADDRESS:+--address "$CONTAINERD_ADDRESS"} images import "$work/image.tar" >&2
echo "$name"
