#!/usr/bin/env bash
# scripts/fetch-traces' carbon download, without a network: the script runs
# from a copy of the checkout's scripts/ and traces/SHA256SUMS* in a scratch
# root, with no shared carbon folder, and a fake `curl` first on PATH that
# records the URL it is asked for and writes a chosen file (or fails).
#  - the pinned file is accepted and put in place;
#  - a file with another sha256 is refused (exit 2, one line naming the
#    mismatch) and nothing is left behind, not even a temporary file;
#  - a failed download is exit 2 with a hint naming the shared folder.
# Usage: check_fetch_carbon.sh SOURCE_DIR
set -euo pipefail
src=$1
good=$src/traces/fetched/carbon/miso_mason_city_2022-10.csv
if [[ ! -f $good ]]; then
    echo "SKIP: $good not fetched (scripts/fetch-traces)"
    exit 77
fi
tmp=$(mktemp -d /tmp/ws-fetch-carbon.XXXXXX)
trap 'rm -rf -- "$tmp"' EXIT
mkdir -p "$tmp/root/scripts" "$tmp/root/traces" "$tmp/bin" "$tmp/zeus" "$tmp/shared"
cp -- "$src/scripts/fetch-traces" "$src/scripts/lib.sh" "$tmp/root/scripts/"
cp -- "$src/traces/SHA256SUMS.carbon" "$tmp/root/traces/"
# the Zeus set is not under test: one small file of our own, copied --from
printf 'x\n' >"$tmp/zeus/a.csv"
(cd "$tmp/zeus" && sha256sum a.csv) >"$tmp/root/traces/SHA256SUMS"
cat >"$tmp/bin/curl" <<'FAKE'
#!/usr/bin/env bash
out=''
while (($# > 0)); do
    case $1 in
        --output) out=$2; shift 2 ;;
        --) url=$2; break ;;
        *) shift ;;
    esac
done
printf '%s\n' "$url" >>"$FAKE_CURL_LOG"
[[ -n $FAKE_CURL_FILE ]] || { echo "curl: (6) Could not resolve host" >&2; exit 6; }
cat -- "$FAKE_CURL_FILE" >"$out"
FAKE
chmod +x "$tmp/bin/curl"
dest=$tmp/root/traces/fetched/carbon
fail() { echo "FAIL: $*" >&2; exit 1; }
run() {   # FILE: the fake download's content ('' : the download fails)
    FAKE_CURL_FILE=$1 FAKE_CURL_LOG=$tmp/urls PATH=$tmp/bin:$PATH WS_SHARED_DIR=$tmp/shared \
        bash "$tmp/root/scripts/fetch-traces" --from "$tmp/zeus" >"$tmp/out" 2>"$tmp/err"
}

# a file whose sha256 is not the pinned one: refused, nothing left behind
{ cat -- "$good"; echo 'MISO_MASON_CITY,2022-10-31T06:20:00+00:00,30,1,1'; } >"$tmp/bad.csv"   # one row more
cmp -s "$good" "$tmp/bad.csv" && fail "the bad file should differ"
st=0; run "$tmp/bad.csv" || st=$?
[[ $st == 2 ]] || fail "a wrong sha256: exit $st, not 2: $(cat "$tmp/err")"
[[ $(wc -l <"$tmp/err") == 1 ]] || fail "one line on stderr: $(cat "$tmp/err")"
grep -q 'miso_mason_city_2022-10.csv: sha256 mismatch (expected bf8da65d.*); refusing it' \
    "$tmp/err" || fail "message: $(cat "$tmp/err")"
[[ -z $(ls -A "$dest" 2>/dev/null) ]] || fail "left behind: $(ls -A "$dest")"
grep -qx 'https://raw.githubusercontent.com/ml-energy/zeus/a17ec338090467ac326092eef592635acab12e9d/trace/carbon_hist.csv' \
    "$tmp/urls" || fail "asked for: $(cat "$tmp/urls")"

# a failed download: exit 2, the hint names where to put the file instead
st=0; run '' || st=$?
[[ $st == 2 ]] || fail "a failed download: exit $st, not 2"
grep -q "download failed from https://.*without network access put miso_mason_city_2022-10.csv into $tmp/shared/traces/carbon" \
    "$tmp/err" || fail "message: $(cat "$tmp/err")"
[[ -z $(ls -A "$dest" 2>/dev/null) ]] || fail "left behind: $(ls -A "$dest")"

# the pinned file: accepted, byte for byte, and a second run has nothing to do
run "$good" || fail "the good file: exit $?: $(cat "$tmp/err")"
cmp -s "$good" "$dest/miso_mason_city_2022-10.csv" || fail "the file put in place differs"
[[ $(ls -A "$dest") == miso_mason_city_2022-10.csv ]] || fail "extra files: $(ls -A "$dest")"
: >"$tmp/urls"
run '' || fail "a verified file is fetched again: $(cat "$tmp/err")"
[[ ! -s $tmp/urls ]] || fail "downloaded again: $(cat "$tmp/urls")"
echo "ok: carbon download accepted the pinned file, refused a wrong sha256 and a failed download"
