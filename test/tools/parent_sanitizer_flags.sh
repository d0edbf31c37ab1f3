#!/bin/sh
# parent_sanitizer_flags.sh SOURCE_DIR WORK_DIR: the library's helpers build, unsanitized,
# when a parent project puts -fsanitize=thread (or address) in CMAKE_CXX_FLAGS, as many do
# for their own sanitizer builds; two of them are static, which a sanitizer cannot be.
set -eu
src=$1
work=$2
for flags in -fsanitize=thread "-fsanitize=address,undefined"; do
    rm -rf "$work"
    cmake -S "$src" -B "$work" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS=$flags" \
        "-DCMAKE_EXE_LINKER_FLAGS=$flags" -DSANDBOX_BUILD_TESTS=OFF -DSANDBOX_BUILD_EXAMPLES=OFF \
        -DSANDBOX_BUILD_BENCH=OFF -DSANDBOX_BUILD_CLI=OFF -DSANDBOX_BUILD_DOCS=OFF -DSANDBOX_INSTALL=OFF >/dev/null
    cmake --build "$work" --target sandbox-spawn sandbox-landlock-exec sandbox-seccomp-exec -j 2 >/dev/null
    for helper in sandbox-spawn sandbox-landlock-exec sandbox-seccomp-exec; do
        bin=$(find "$work" -name "$helper" -type f | head -n 1)
        if [ -z "$bin" ]; then
            echo "$flags: $helper was not built" >&2
            exit 1
        fi
        if nm "$bin" 2>/dev/null | grep -q -e __tsan_ -e __asan_; then
            echo "$flags: $helper is sanitized" >&2
            exit 1
        fi
    done
    echo "$flags: the helpers build unsanitized"
done
rm -rf "$work"
