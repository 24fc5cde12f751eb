#!/usr/bin/env bash
# shellcheck shell=bash
#
# scripts/lib.sh -- helpers shared by wattsim's scripts. Source it:
#
#   . "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
#
# Functions:
#   ws_root                       print the repository root (from this file's location)
#   ws_say MSG...                 print a progress line "==> MSG"
#   ws_die CODE MSG...            print "PROG: MSG" on stderr and exit CODE
#   ws_ensure_packages [PKG...]   install the missing Debian packages the project
#                                 needs (plus any PKG given); exit 2 when impossible
#   ws_build [DIR] [CMAKE_ARG...] configure and build into DIR (default build/,
#                                 relative to the root) as Release unless a
#                                 -DCMAKE_BUILD_TYPE=... is among the arguments,
#                                 and, when DIR is new, without the test
#                                 suite unless -DWS_TESTS=ON is
#   ws_fetch_traces [ARG...]      run scripts/fetch-traces with ARGs
#
# Environment:
#   WS_JOBS    parallel build jobs (default: nproc)

# Debian packages the project needs to build, run and plot (libmicrohttpd
# and SQLite: `wattsim serve`, built only when both are found).
WS_PACKAGES=(build-essential cmake pkg-config libgsl-dev libyaml-dev zlib1g-dev libjansson-dev
             gnuplot-nox ca-certificates curl libmicrohttpd-dev libsqlite3-dev)
# ... and to build and run the test suite (scripts/test): Criterion, poppler's
# pdfinfo/pdftotext for the figure checks, python3 for the manual's examples,
# locales for the locale sources localedef builds de_DE.UTF-8 from
# (test_hostile: a plugin's setlocale), numpy and pandas (1.24 and 1.5 on
# Debian 12) as the random streams' oracle.
WS_TEST_PACKAGES=(libcriterion-dev poppler-utils python3 locales python3-numpy python3-pandas
    python3-pytest)

_WS_ROOT=$(cd -- "$(dirname -- "$(readlink -f -- "${BASH_SOURCE[0]}")")/.." && pwd -P)
_WS_PROG=$(basename -- "${0:-wattsim}")

ws_root() {
    printf '%s\n' "$_WS_ROOT"
}

ws_say() {
    printf '==> %s\n' "$*"
}

ws_die() {
    local code=$1
    shift
    printf '%s: %s\n' "$_WS_PROG" "$*" >&2
    exit "$code"
}

# ws_ensure_packages [EXTRA_PKG...]
# shellcheck disable=SC2120 # arguments are optional
# Only for the MPI build (scripts/test --mpi, the CI's MPI stage).
# time: /usr/bin/time, for test_mpi's peak RSS of rank 0.
WS_MPI_PACKAGES=(libopenmpi-dev openmpi-bin time)

ws_ensure_packages() {
    local pkgs=("${WS_PACKAGES[@]}" "$@") missing=() p status
    if ! command -v dpkg-query >/dev/null 2>&1; then
        ws_say "not a Debian system: cannot check packages; make sure these (or their equivalents) are installed: ${pkgs[*]}"
        return 0
    fi
    for p in "${pkgs[@]}"; do
        status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
        [[ $status == "install ok installed" ]] || missing+=("$p")
    done
    if ((${#missing[@]} == 0)); then
        ws_say "packages: all ${#pkgs[@]} present"
        return 0
    fi

    local sudo=()
    if ((EUID != 0)); then
        if ! command -v sudo >/dev/null 2>&1; then
            ws_die 2 "missing packages, and not root and no sudo: apt-get install ${missing[*]}"
        fi
        # Never prompt for a password when there is no terminal (CI).
        if [[ -t 0 ]]; then sudo=(sudo); else sudo=(sudo -n); fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        ws_die 2 "missing packages and no apt-get: install ${missing[*]}"
    fi

    ws_say "installing missing packages: ${missing[*]}"
    local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o Dpkg::Use-Pty=0)
    if ! "${apt[@]}" update >/dev/null; then
        ws_say "apt-get update failed; trying to install from the current package lists"
    fi
    if ! "${apt[@]}" install -y --no-install-recommends "${missing[@]}"; then
        ws_die 2 "could not install packages: apt-get install ${missing[*]}"
    fi
}

# ws_build [BUILD_DIR] [EXTRA_CMAKE_ARG...]
ws_build() {
    local dir=${1:-build}
    if (($# > 0)); then shift; fi
    [[ $dir == /* ]] || dir="$_WS_ROOT/$dir"

    local args=("$@") type_given=0 tests_given=0 a
    for a in "${args[@]}"; do
        if [[ $a == -DCMAKE_BUILD_TYPE=* ]]; then type_given=1; fi
        if [[ $a == -DWS_TESTS=* ]]; then tests_given=1; fi
    done
    ((type_given)) || args=(-DCMAKE_BUILD_TYPE=Release "${args[@]}")
    # A new build folder is made without the test suite unless asked for
    # (scripts/test asks): trying the tool should not need Criterion. An
    # existing one keeps what it has (a later scripts/demo does not drop
    # the tests scripts/test built).
    if ((!tests_given)) && [[ ! -e $dir/CMakeCache.txt ]]; then
        args=(-DWS_TESTS=OFF "${args[@]}")
    fi

    local jobs=${WS_JOBS:-$(nproc 2>/dev/null || echo 2)}
    ws_say "configuring ${dir#"$_WS_ROOT"/} (${args[*]})"
    cmake -S "$_WS_ROOT" -B "$dir" "${args[@]}"
    ws_say "building ${dir#"$_WS_ROOT"/} with $jobs jobs"
    cmake --build "$dir" -j "$jobs"
}

# ws_fetch_traces [ARG...]
# shellcheck disable=SC2120 # arguments are optional
ws_fetch_traces() {
    "$_WS_ROOT/scripts/fetch-traces" "$@"
}

# Run directly: explain what this file is.
if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
    sed -n '3,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
    case ${1-} in
        -h | --help | "") exit 0 ;;
        *) exit 2 ;;
    esac
fi
