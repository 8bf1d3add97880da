#!/usr/bin/env bash
# `make dist`'s tarball unpacked outside the repository and run as on a machine without Swift, and the wheel's tag.
# Usage: Tests/Dist/dist_test.sh   (run by `make test-dist` and `make test`; builds the wheel when dist/ has none)
#
#   files     the tarball unpacks into one folder: README.md, bin/koe, libexec/koe/koe-LEVEL for x86-64 and
#             x86-64-v3, share/man/man1/koe.1, the bash, zsh and fish completions, lib/lv2/koe.lv2, lib/ladspa
#   version   `env -i PATH=/usr/bin:/bin bin/koe --version` is `X.Y.Z (COMMIT)`, the version in the tarball's name
#   convert   bin/koe (the launcher, the build this CPU gets) and libexec/koe/koe-x86-64 each convert a sample with
#             --pitch 1.2 --formant 1.1 from a folder outside the repository, into a non-empty wav, the same bytes
#   ldd       no binary or plugin needs anything of the Swift toolchain, or a library ldd cannot find
#   readme    each library they name (ELF NEEDED) comes from a Debian package README.md's `apt install` names, or
#             from libc6 or libgcc-s1, which every system has
#   wheel     dist/ holds one wheel, and `auditwheel show` names a manylinux_*_x86_64 tag for it
#
# Exits non-zero when a check fails, with one line saying why; the last line reads `dist: N passed, M failed`.
set -u

suite=dist
source "$(dirname "$0")/../Harness/checks.sh"
python=${PYTHON:-python3}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

make_or_finish "$scratch/dist.log" dist
tarballs=("$repository"/.build/dist/koe-*-linux-x86_64.tar.gz)
if [ ${#tarballs[@]} -ne 1 ] || [ ! -f "${tarballs[0]}" ]; then
    fail "make dist: .build/dist holds not one koe-*-linux-x86_64.tar.gz but: ${tarballs[*]}"
    finish
fi
tarball=${tarballs[0]}
name=$(basename "$tarball" .tar.gz)
version=${name#koe-}
version=${version%-linux-x86_64}

# --- files
unpacked=$scratch/unpacked
mkdir "$unpacked" && tar -xzf "$tarball" -C "$unpacked"
root=$unpacked/$name
expected="README.md bin/koe libexec/koe/koe-x86-64 libexec/koe/koe-x86-64-v3 share/man/man1/koe.1
    share/bash-completion/completions/koe share/zsh/site-functions/_koe share/fish/vendor_completions.d/koe.fish
    lib/lv2/koe.lv2/koe.so lib/lv2/koe.lv2/manifest.ttl lib/ladspa/koe-ladspa.so"
missing=$(for file in $expected; do [ -f "$root/$file" ] || echo "$file"; done)
top=$(ls "$unpacked")
if [ "$top" != "$name" ]; then
    fail "files: the tarball unpacks into '$top', not one folder $name"
    finish
elif [ -n "$missing" ]; then
    fail "files: missing from the tarball: $(echo $missing)"
else
    pass "files      $(basename "$tarball") ($(du -h "$tarball" | cut -f1)), $(cd "$root" && find . -type f | wc -l) files"
fi

# --- version
koe_version=$(cd "$scratch" && env -i PATH=/usr/bin:/bin "$root/bin/koe" --version 2>&1)
# The tarball's version is setup.py's: 0.1.0+g2e10d06 (.dirty) for koe --version's 0.1.0 (2e10d06) (-dirty).
base=${version%%+*}
commit=${version#*+g}
commit=${commit%.dirty}
[ "$commit" = "$version" ] && commit=unknown
[[ $version == *.dirty ]] && commit=$commit-dirty
if [ "$koe_version" = "$base ($commit)" ]; then
    pass "version    env -i PATH=/usr/bin:/bin bin/koe --version: $koe_version"
else
    fail "version: bin/koe --version says '$koe_version', expected '$base ($commit)' (the tarball's $version)"
fi

# --- convert
sample=$repository/samples/en-f-48k.wav
convert_failures=""
for program in bin/koe libexec/koe/koe-x86-64; do
    output=$scratch/$(basename "$program").wav
    if ! message=$(cd "$scratch" && env -i PATH=/usr/bin:/bin "$root/$program" convert "$sample" "$output" \
            --pitch 1.2 --formant 1.1 2>&1); then
        convert_failures+="$program exited non-zero: $message; "
    elif [ "$(head -c 4 "$output")" != RIFF ] || [ "$(tail -c +9 "$output" | head -c 4)" != WAVE ] ||
            [ "$(stat -c %s "$output")" -le 44 ]; then
        convert_failures+="$program wrote no wav with samples ($(stat -c %s "$output" 2>/dev/null) bytes); "
    fi
done
if [ -n "$convert_failures" ]; then
    fail "convert: $convert_failures"
elif ! cmp -s "$scratch/koe.wav" "$scratch/koe-x86-64.wav"; then
    fail "convert: bin/koe and libexec/koe/koe-x86-64 wrote different files"
else
    pass "convert    bin/koe and libexec/koe/koe-x86-64: the same $(stat -c %s "$scratch/koe.wav")-byte wav from $(basename "$sample")"
fi

# --- ldd
binaries=$(cd "$root" && ls libexec/koe/* lib/lv2/koe.lv2/*.so lib/ladspa/*.so)
ldd_failures=""
for binary in $binaries; do
    wrong=$(ldd "$root/$binary" 2>&1 | grep -E 'not found|swift')
    [ -n "$wrong" ] && ldd_failures+="$binary: $(echo $wrong); "
done
libraries=$(for binary in $binaries; do
    objdump -p "$root/$binary" | awk '$1 == "NEEDED" { print $2 }'
done | sort -u)
if [ -n "$ldd_failures" ]; then
    fail "ldd: $ldd_failures"
else
    pass "ldd        $(echo $binaries | wc -w) binaries, nothing of the toolchain, nothing not found; they name $(echo $libraries)"
fi

# --- readme
named=" $(sed -n 's/^apt install //p' "$root/README.md") libc6 libgcc-s1 "
unnamed=""
for library in $libraries; do
    package=$(dpkg -S "*/$library" 2>/dev/null | head -1 | cut -d: -f1)
    [[ -n $package && $named == *" $package "* ]] || unnamed+="$library (${package:-no package}) "
done
if [ -n "$unnamed" ]; then
    fail "readme: README.md's apt install does not name the package of $unnamed"
else
    pass "readme     the packages of all $(echo $libraries | wc -w) libraries are named:$named"
fi

# --- wheel
compgen -G "$repository/dist/koe-*.whl" >/dev/null || make_or_finish "$scratch/wheel.log" wheel
wheels=("$repository"/dist/*.whl)
shown=$("$python" -m auditwheel show "${wheels[0]}" 2>&1)
tag=$(grep -oE 'manylinux_[0-9]+_[0-9]+_x86_64' <<<"$shown" | head -1)
if [ ${#wheels[@]} -ne 1 ]; then
    fail "wheel: dist/ holds ${#wheels[@]} wheels, not one: ${wheels[*]##*/}"
elif [ -z "$tag" ] || [[ ${wheels[0]} != *"$tag"* ]]; then
    fail "wheel: $(basename "${wheels[0]}"): no manylinux tag in its name or in auditwheel show: $(echo $shown)"
else
    pass "wheel      $(basename "${wheels[0]}"): auditwheel show: $tag"
fi

finish
