#!/bin/sh
# python-prefix.sh NAME COMMANDS REQUIREMENT...: build a Python agent's self-contained prefix /opt/lab/agents/NAME
# in a Debian build stage, so the agent runs on any Debian base (bullseye or later) whatever Python it has, and
# never loads the base's Python, its packages or its C library.
#
#   NAME/python/       Debian's python3 with its standard library; python/lib/elf/ holds the ELF closure of
#                      every shared library the prefix loads (ldd), with the build stage's ld-linux and libc
#   NAME/bin, lib/     a virtualenv over that interpreter with REQUIREMENT... installed by pip (PyPI)
#   NAME/commands/     only the agent's COMMANDS (comma-separated console scripts), run with `python -E`;
#                      the image puts this folder, not bin/, on PATH, so `python` and `pip` stay the base's
#
# The interpreter and every ELF executable in the prefix get the prefix's ld-linux as their ELF interpreter and
# python/lib/elf as DT_RPATH; every shared object gets python/lib/elf after its own paths, so the dynamic loader
# finds the prefix's copy before the base's /etc/ld.so.cache. Nothing sets LD_LIBRARY_PATH: the programs the
# agent starts (bash, git, the tests) run on the base's own loader and libraries.
# Needs (apt): python3 python3-venv patchelf file. Run as root in the build stage.
set -eu
name=$1 commands=$2
shift 2
prefix=/opt/lab/agents/$name
runtime=$prefix/python
elf=$runtime/lib/elf
py=$(readlink -f /usr/bin/python3)
ver=$(basename "$py")

mkdir -p "$runtime/bin" "$elf" "$prefix/commands"
cp "$py" "$runtime/bin/$ver"
ln -s "$ver" "$runtime/bin/python3"
cp -a "/usr/lib/$ver" "$runtime/lib/$ver"
rm -rf "$runtime/lib/$ver/test" "$runtime/lib/$ver/idlelib" "$runtime/lib/$ver"/config-*
find "$runtime/lib/$ver" -name __pycache__ -prune -exec rm -rf {} +
"$runtime/bin/python3" -m compileall -q -j0 "$runtime/lib/$ver" >/dev/null || true

# the virtualenv (pip from Debian's ensurepip wheels, then the requirements from PyPI)
"$runtime/bin/python3" -m venv "$prefix"
"$prefix/bin/python" -m pip install --no-warn-script-location "$@"

# ELF closure: every library an ELF file of the prefix needs from outside it, by ldd (transitive), plus the
# NSS modules libc opens by name for host lookups
# (one Python process reads the first bytes of every regular file: a shell per file took 15 minutes of a build
# on the 28,000 files of OpenHands' prefix)
elfs=$(mktemp)
"$runtime/bin/python3" -c '
import os, sys
prefix, skip = sys.argv[1], sys.argv[2] + "/"
for root, dirs, files in os.walk(prefix):
    for name in files:
        path = os.path.join(root, name)
        if not path.startswith(skip) and not os.path.islink(path) and os.path.isfile(path):
            with open(path, "rb") as f:
                if f.read(4)[1:] == b"ELF":
                    print(path)
' "$prefix" "$elf" > "$elfs"
{
  xargs -r -d '\n' ldd < "$elfs" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
  ls /lib/x86_64-linux-gnu/libnss_files.so.2 /lib/x86_64-linux-gnu/libnss_dns.so.2 \
     /lib/x86_64-linux-gnu/libresolv.so.2 2>/dev/null || true
} | sort -u | grep -v "^$prefix/" | while read -r lib; do cp -L "$lib" "$elf/$(basename "$lib")"; done
loader=$(ls "$elf"/ld-linux-*.so.* | head -n1)

# point the prefix's ELF files at its own loader and libraries
while read -r f; do
  if patchelf --print-interpreter "$f" >/dev/null 2>&1; then
    # two calls, the search path first: patchelf 0.18 (Debian trixie) writes an executable that crashes at start
    # when given both at once, or the interpreter first (trixie's python3.13: a segmentation fault on `-c pass`)
    patchelf --force-rpath --set-rpath "$elf" "$f"
    patchelf --set-interpreter "$loader" "$f"
  elif old=$(patchelf --print-rpath "$f" 2>/dev/null); then
    patchelf --force-rpath --set-rpath "${old:+$old:}$elf" "$f"
  fi
done < "$elfs"
for lib in "$elf"/*; do
  [ "$lib" = "$loader" ] || patchelf --force-rpath --set-rpath '$ORIGIN' "$lib"
done
rm -f "$elfs"

# the agent's commands, and nothing else, for PATH; -E: the base's PYTHONPATH and PYTHONHOME stay out
for c in $(echo "$commands" | tr ',' ' '); do
  sed "1s|^#!.*|#!$prefix/bin/python -E|" "$prefix/bin/$c" > "$prefix/commands/$c"
  chmod 755 "$prefix/commands/$c"
done
"$prefix/bin/python" -c "import ssl, sqlite3, ctypes, lzma, bz2, zlib, hashlib, socket; socket.getaddrinfo('localhost', 80)"
