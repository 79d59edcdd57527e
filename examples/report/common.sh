# Shared by the screenshot scripts of this folder, sourced (`. "$here/common.sh"`) after
# they set `here` (this folder), `script` (their name, for messages) and `default_out`.
# Sets `root`, `out` (the script's first argument or `default_out`, made absolute and
# created), `python` (the project's venv when there is one) and `browser` (Chromium), and
# defines `screenshot WIDTH,HEIGHT`, which writes "$out/page.png" of
# "$out/report/index.html". Exits with one line when Chromium is missing.
root=$(cd "$here/../.." && pwd)
out=${1:-$default_out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -x "$root/.venv/bin/python" ]; then python="$root/.venv/bin/python"; else python=python3; fi
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "$script: chromium not found; install it with: apt-get install chromium" >&2
    exit 1
fi

screenshot() {
    profile=$(mktemp -d)
    trap 'rm -rf "$profile"' EXIT
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --hide-scrollbars --screenshot="$out/page.png" \
        --window-size="$1" "file://$out/report/index.html" 2>/dev/null
}
