#!/usr/bin/env bash
# Builds DMTCP with Ferry's patches (tools/dmtcp-patches/*.patch: ranks joined by TCP across hosts, which
# upstream DMTCP hangs on at every checkpoint and cannot restore) from the source snapshot in
# ../shared/third-party (or $DMTCP_SOURCE_TAR) into PREFIX (default /opt/ckpt-tools/dmtcp-ferry), once:
# a later call with the same tarball and patches returns at once. Prints PREFIX/bin last; put it on PATH
# ahead of any other DMTCP. PREFIX/share/ferry/dmtcp-patches lists the patches built in, which Ferry reads
# to tell a patched DMTCP from another. Needs gcc, g++, make; about 5-9 minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tar=${DMTCP_SOURCE_TAR:-$(ls "$here"/../../shared/third-party/dmtcp-*.tar.xz 2>/dev/null | head -1)}
if [ -z "$tar" ] || [ ! -f "$tar" ]; then
  echo "no DMTCP source: set DMTCP_SOURCE_TAR, or put dmtcp-*.tar.xz in ../shared/third-party" >&2; exit 1
fi
prefix=${FERRY_DMTCP_PREFIX:-/opt/ckpt-tools/dmtcp-ferry}
sum=$(cat "$here"/dmtcp-patches/*.patch | sha256sum | cut -c1-12)
stamp="$prefix/.built-$(basename "$tar" .tar.xz)-$sum"
if [ -f "$stamp" ]; then echo "$prefix/bin"; exit 0; fi
mkdir -p "$prefix"
exec 9>"$prefix/.lock"; flock 9                       # one build at a time on this machine
if [ -f "$stamp" ]; then echo "$prefix/bin"; exit 0; fi
log="$prefix/build.log"; : >"$log"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
tar -xJf "$tar" -C "$work"
src=$(ls -d "$work"/*/ | head -1)
for p in "$here"/dmtcp-patches/*.patch; do
  patch -d "$src" -p1 <"$p" >>"$log" 2>&1 || { echo "patch $(basename "$p") does not apply to $tar: see $log" >&2; exit 1; }
done
rm -f "$prefix"/.built-*
( cd "$src" && ./configure --prefix="$prefix" && make -j"$(nproc)" && make install ) >>"$log" 2>&1 \
  || { echo "DMTCP build failed: see $log" >&2; exit 1; }
mkdir -p "$prefix/share/ferry"
(cd "$here/dmtcp-patches" && ls *.patch) >"$prefix/share/ferry/dmtcp-patches"
touch "$stamp"
echo "$prefix/bin"
