#!/usr/bin/env bash
# Checks that each vendored crate (vendor/<crate>/) is exactly its crates.io release plus
# its one patch (vendor/<crate>.patch), as vendor/README.md says: downloads the release,
# checks it against the SHA-256 crates.io publishes for it (pinned below), unpacks it,
# drops what the README's update steps drop (Cargo.lock, .cargo*), applies the patch and
# compares the result with vendor/<crate>/ file by file. Exits 1, naming the
# differences, when they differ. Run by .ci/run; needs curl (or python3), tar and patch
# (or git).
#
# Renewing a crate (vendor/README.md): update the version and checksum here too; the
# checksum is the `cksum` of that version in the crates.io index
# (https://index.crates.io/ma/tr/<crate>).
set -euo pipefail
cd "$(dirname "$0")/.."

# crate version sha256-of-the-.crate-file
CRATES=(
  "matrix-sdk-crypto 0.18.0 c54afd2a326f51c13a6ad44ec86315a688fffeb3f1e287fb343e0e1836a3bdaf"
  "matrix-sdk 0.18.0 7083d580527511ac5d9369e03b9f2b20902e76949f1b3964051f978e4d3756ae"
)

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

download() { # url file
  if command -v curl >/dev/null; then
    curl --silent --show-error --fail --location --retry 3 --output "$2" "$1"
  else
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$1" "$2"
  fi
}

apply_patch() { # dir patch
  if command -v patch >/dev/null; then
    patch --quiet --directory "$1" --strip 1 --input "$2"
  else
    (cd "$1" && git apply -p1 "$2") # outside a repository, git apply patches plain files
  fi
}

status=0
for entry in "${CRATES[@]}"; do
  read -r crate version sum <<<"$entry"
  file="$work/$crate-$version.crate"
  download "https://static.crates.io/crates/$crate/$crate-$version.crate" "$file"
  got="$(sha256sum "$file" | cut -d' ' -f1)"
  if [[ "$got" != "$sum" ]]; then
    echo "check-vendor: $crate $version from crates.io has SHA-256 $got, expected $sum" >&2
    exit 1
  fi
  tar -xzf "$file" -C "$work"
  release="$work/$crate-$version"
  rm -f "$release/Cargo.lock" "$release"/.cargo*
  apply_patch "$release" "$PWD/vendor/$crate.patch"
  if diff --recursive --brief "$release" "vendor/$crate" >"$work/diff" 2>&1; then
    echo "vendor/$crate: crates.io $crate $version plus vendor/$crate.patch, exactly"
  else
    echo "vendor/$crate differs from crates.io $crate $version plus vendor/$crate.patch:" >&2
    sed 's/^/  /' "$work/diff" >&2
    echo "  (vendor/README.md says how to renew it; change only the patch, never the copy)" >&2
    status=1
  fi
done
exit "$status"
