# Sourced by the install-*.sh scripts that put a PyPI package in a cached Python venv
# (Synapse for the tests; matrix-nio and Limnoria for the benchmarks). The caller sets:
#   TOOL      its script's name, for messages (install-synapse)
#   WHAT      the package's name for people (Synapse)
#   NEEDED_BY who needs it (the Matrix tests)
#   VENV      the venv's path; SPEC the pip requirement; PYTHON the interpreter
#   MIN_PYTHON the oldest Python it runs on, as "3.10"
#   SIZE      how long the install takes, for the message ("about 20 s and 240 MB")
# and defines installed_version(), which prints the installed version or fails. Then it
# calls pip_venv_install. A marker written last, after an install that passed
# installed_version, lets a later run that finds the same SPEC do nothing; a venv
# without it (an install cut short) is installed again.

MARKER="$VENV/.spellbridge-installed"

say() { echo "$TOOL: $*"; }
fail() {
    echo "$TOOL: error: $*" >&2
    echo "$TOOL: $NEEDED_BY cannot run without $WHAT in the venv $VENV" >&2
    echo "$TOOL: (python3 >= $MIN_PYTHON with the venv module, and access to PyPI)." >&2
    exit 1
}

pip_venv_install() {
    local version started=$SECONDS
    if [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$SPEC" ] && version="$(installed_version)"; then
        say "already installed: $WHAT $version in $VENV"
        return 0
    fi
    command -v "$PYTHON" >/dev/null 2>&1 || fail "$PYTHON not found: install Python $MIN_PYTHON or newer, or set PYTHON"
    "$PYTHON" -c "import sys; sys.exit(0 if sys.version_info >= tuple(map(int, '$MIN_PYTHON'.split('.'))) else 1)" \
        || fail "$PYTHON is $("$PYTHON" --version 2>&1); $WHAT needs Python $MIN_PYTHON or newer (set PYTHON)"

    rm -f "$MARKER"
    if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
        say "creating the venv $VENV with $("$PYTHON" --version 2>&1)"
        rm -rf "$VENV"
        mkdir -p "$(dirname "$VENV")"
        "$PYTHON" -m venv "$VENV" \
            || fail "'$PYTHON -m venv $VENV' failed (on Debian: apt-get install python3-venv)"
    fi

    say "installing $SPEC ($SIZE)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$SPEC" \
        || fail "pip install $SPEC failed (see above)"

    version="$(installed_version)" || fail "pip installed $SPEC but $WHAT does not run from $VENV"
    echo "$SPEC" >"$MARKER"
    say "installed: $WHAT $version in $VENV in $((SECONDS - started)) s"
}
