# shellcheck shell=bash
# Sourced by the scripts that build: puts a Swift toolchain on PATH when
# there is none yet, from /opt/swift (where the CI image has it).
if ! command -v swift >/dev/null 2>&1 && [[ -x /opt/swift/usr/bin/swift ]]; then
    export PATH="/opt/swift/usr/bin:$PATH"
fi
