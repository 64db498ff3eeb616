#!/usr/bin/env bash
# fetch_libs.sh DEST
#
# Puts pinned source snapshots of snnTorch, Norse, NIR and NIRTorch under DEST
# (default /tmp/neuro-ref), one folder each, with a COMMIT file beside the code,
# so that gen_reference.py can import them from PYTHONPATH and record exactly
# which version produced the fixtures. Nothing here is installed system-wide
# and nothing of it is committed to this repository.
#
# Each library comes from a git repository: by default it is cloned from
# GitHub; set SNNTORCH_GIT, NORSE_GIT, NIR_GIT or NIRTORCH_GIT to an existing
# (possibly bare) git directory to use that instead. Only the Python package
# folder is exported (git archive), which also avoids large LFS files that a
# partial mirror may lack.
set -euo pipefail

DEST=${1:-/tmp/neuro-ref}
mkdir -p "$DEST"

# name  github-repo            pinned commit                              package folder
LIBS=(
  "snntorch jeshraghian/snntorch 634fc22385ec5581998e62787bbe39b53662140f snntorch"
  "norse    norse/norse          065a3b45cf13bc8156d18987380f6d26c09f08a2 norse"
  "nir      neuromorphs/NIR      7232ada6d30e1beea78b180a5135b1a3bb3d3bc0 nir"
  "nirtorch neuromorphs/NIRTorch 2604ce2bc9ab74843c840a547bd0ff61a97c447f nirtorch"
)

for line in "${LIBS[@]}"; do
  read -r name repo commit pkg <<<"$line"
  var="$(echo "$name" | tr '[:lower:]' '[:upper:]')_GIT"
  gitdir="${!var:-}"
  if [[ -z "$gitdir" ]]; then
    gitdir="$DEST/.git-$name"
    if [[ ! -d "$gitdir" ]]; then
      git clone --bare --filter=blob:none "https://github.com/$repo" "$gitdir"
    fi
  fi
  out="$DEST/$name"
  rm -rf "$out"
  mkdir -p "$out"
  if ! git --git-dir="$gitdir" cat-file -e "$commit^{commit}" 2>/dev/null; then
    echo "fetch_libs: $name: pinned commit $commit not in $gitdir; using its HEAD" >&2
    commit=$(git --git-dir="$gitdir" rev-parse HEAD)
  fi
  git --git-dir="$gitdir" archive "$commit" "$pkg" | tar -x -C "$out"
  echo "$commit" >"$out/COMMIT"
  echo "fetch_libs: $name @ $commit -> $out"
done

echo "PYTHONPATH=$DEST/snntorch:$DEST/norse:$DEST/nir:$DEST/nirtorch"
