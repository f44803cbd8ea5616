#!/usr/bin/env bash
# Packs what the staging benchmark needs on a machine with no JDK, no Maven and no zstd (the
# many-core machine that is sometimes available): a jlink'ed JRE, the jars of the push/pull path, the
# zstd binary with its libraries, and run.sh. Checks the kit by running it here with a small image.
#   benchmarks/device-kit.sh [KIT_DIR]            (default: device-kit/, git-ignored, under 64 MiB)
# On the other machine, from the repository root:  device-kit/run.sh SIZE WORK_DIR [ROUNDS]
# Environment: MVN_FLAGS (e.g. -o), KIT_CHECK=off to skip the check.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
kit="$(realpath -m "${1:-device-kit}")"
mvn ${MVN_FLAGS:-} -q -B package -DskipTests -DskipITs -Djacoco.skip=true -pl benchmarks -am
mvn ${MVN_FLAGS:-} -q -B dependency:build-classpath -pl benchmarks -Dmdep.outputFile="$here/benchmarks/target/classpath.txt"
rm -rf "$kit"
mkdir -p "$kit/lib" "$kit/zstd"

# Ferry's own jars, and of the third-party ones only those a push and pull load (the rest, Kafka,
# Hadoop, the AWS SDK and the test servers, would not fit the 64 MiB a device call carries).
for m in model compression stores staging eventlog coordinator capture-agent cli benchmarks; do
  cp "$m"/target/ferry-"$m"-*[0-9T].jar "$kit/lib/"
done
# (measured: the classes a push, a pull and this benchmark load, -Xlog:class+load)
needed='/com/github/luben/zstd-jni/|/at/yawk/lz4/lz4-java/|/info/picocli/picocli/|/ch/qos/logback/|/org/slf4j/slf4j-api/|/com/fasterxml/jackson/core/'
tr ':' '\n' < benchmarks/target/classpath.txt | grep -E "$needed" | while read -r j; do cp "$j" "$kit/lib/"; done
# zstd-jni and lz4-java carry a native library for each of many platforms: keep this machine's (Linux, x86-64 or aarch64).
arch="$(uname -m)"; [ "$arch" = x86_64 ] && arch=amd64
python3 - "linux/$arch/" "$kit"/lib/zstd-jni-*.jar "$kit"/lib/lz4-java-*.jar <<'PY'
import sys, zipfile, os
keep = sys.argv[1]
natives = ('.so', '.dll', '.dylib', '.jnilib')
for jar in sys.argv[2:]:
    with zipfile.ZipFile(jar) as src, zipfile.ZipFile(jar + '.new', 'w', zipfile.ZIP_DEFLATED) as dst:
        for e in src.infolist():
            if not e.filename.endswith(natives) or keep in e.filename:
                dst.writestr(e, src.read(e.filename))
    os.replace(jar + '.new', jar)
PY

# A JRE with the modules those jars use (jdeps), stripped.
modules="$(jdeps -q --ignore-missing-deps --multi-release 17 --print-module-deps "$kit"/lib/*.jar)"
jlink --add-modules "$modules,jdk.management,jdk.unsupported" --strip-debug --no-header-files --no-man-pages \
  --compress=2 --output "$kit/jre" > /dev/null

# zstd and the libraries it links beyond glibc, run with LD_LIBRARY_PATH.
cp "$(command -v zstd)" "$kit/zstd/zstd"
ldd "$(command -v zstd)" | awk '/=> \//{print $3}' | grep -vE '/(libc|libm|libpthread|libdl|ld-linux)[.-]' \
  | while read -r l; do cp -L "$l" "$kit/zstd/"; done

cat > "$kit/run.sh" <<'EOF'
#!/usr/bin/env bash
# device-kit/run.sh SIZE WORK_DIR [ROUNDS]: the many-core staging benchmark (io.ferry.benchmarks.ManyCoreBenchmark)
set -euo pipefail
kit="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export LD_LIBRARY_PATH="$kit/zstd${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export ZSTD="$kit/zstd/zstd"
mkdir -p "$2"
echo "$(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(df -h "$2" | awk 'NR==2{print $2" "$1}'), uptime: $(uptime)"
exec "$kit/jre/bin/java" -Xmx8g -Djna.tmpdir="$2/jna" -cp "$kit/lib/*" io.ferry.benchmarks.ManyCoreBenchmark "$@"
EOF
chmod +x "$kit/run.sh"
echo "kit: $kit, $(du -sm "$kit" | cut -f1) MiB"
if [ "${KIT_CHECK:-on}" != off ]; then
  # The check: the kit alone (its JRE, its jars, its zstd), a small image, one round.
  work="$(mktemp -d)"
  env -i PATH=/usr/bin:/bin HOME="$work" "$kit/run.sh" 64MiB "$work/w" 1 | tail -n 20
  rm -rf "$work"
fi
