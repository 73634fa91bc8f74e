#!/bin/sh
# CMake's checks of the C++ toolchain (the compiler's identification, ABI and features), run once here for this
# image's compiler as the exercises' CMakeLists.txt ask for them (cmake_minimum_required 3.5.1, then
# project(<exercise> CXX)). The result, /opt/lab/cpp/cmake-seed, is a build folder's CMakeFiles/<version>/ and a
# CMakeCache.txt holding only the toolchain's entries (none names this project or its folders). check.sh copies it
# into each grading's fresh build folder: cmake then finds the checks done, as in a build folder configured
# before, and writes the same build files and cache (only CMakeFiles/Makefile.cmake, the list of files that would
# make `make` re-run cmake, leaves out the detection modules it did not read) with about a tenth of the CPU (0.02 s
# instead of 0.17 s). A project's own checks (find_package(Threads)'s pthread test) still run. The seed is the
# image's, read-only: no graded code can write it.
set -eu
seed=/opt/lab/cpp/cmake-seed
src=$(mktemp -d)
build=$(mktemp -d)
printf 'cmake_minimum_required(VERSION 3.5.1)\nproject(labseed CXX)\n' > "$src/CMakeLists.txt"
(cd "$build" && cmake "$src" > /dev/null)
version=$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')
mkdir -p "$seed/CMakeFiles"
cp -R "$build/CMakeFiles/$version" "$seed/CMakeFiles/"
# every entry but the project's own (with the help text above it): its name, folders, and what the configure counted
awk -v src="$src" -v build="$build" '
  /^\/\// { help = help $0 "\n"; next }
  /^(labseed_|CMAKE_PROJECT_|CMAKE_CACHEFILE_DIR|CMAKE_HOME_DIRECTORY|CMAKE_FIND_PACKAGE_REDIRECTS_DIR)/ \
    || /^(CMAKE_NUMBER_OF_MAKEFILES|FIND_PACKAGE_MESSAGE_DETAILS_)/ || index($0, src) || index($0, build) {
    help = ""; next
  }
  { printf "%s%s\n", help, $0; help = "" }' "$build/CMakeCache.txt" > "$seed/CMakeCache.txt"
grep -q '^CMAKE_PLATFORM_INFO_INITIALIZED:INTERNAL=1$' "$seed/CMakeCache.txt"
if grep -rl -e "$src" -e "$build" -e labseed "$seed"; then echo "cmake-seed: the seed names its own project"; exit 1; fi
chmod -R a+rX "$seed"
rm -rf "$src" "$build"
echo "cpp: CMake's toolchain checks seeded into $seed ($(wc -l < "$seed/CMakeCache.txt") cache lines)"
