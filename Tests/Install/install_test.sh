#!/usr/bin/env bash
# `make install` and `make uninstall` into a temporary DESTDIR, checked as a user would find them.
# Usage: Tests/Install/install_test.sh   (run by `make test-install` and `make test`, which install what it needs:
# man-db, groff, zsh and fish)
#
#   files       install puts exactly these under PREFIX: bin/koe, share/man/man1/koe.1 and koe.SUB.1 for every
#               subcommand of `koe --help` (and help), the bash, zsh and fish completions, the LV2/LADSPA plugins if built
#   version     `koe --version` is `X.Y.Z (COMMIT)`, COMMIT being this checkout's HEAD (`-dirty` when the
#               sources differ from it) or `unknown` outside a git checkout
#   man         `man -l` renders every page: exit 0, NAME and SYNOPSIS sections, the command's own name
#   bash        sourcing the completion defines it for koe, and it completes subcommands and options
#   zsh, fish   zsh's compinit finds the completion for koe in site-functions; fish completes an option
#   uninstall   `make uninstall` with the same PREFIX and DESTDIR leaves no file behind
#
# Exits non-zero when a check fails, with one line saying why; the last line reads `install: N passed, M failed`.
set -u

suite=install
source "$(dirname "$0")/../Harness/checks.sh"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=/opt/koe-install-test
root=$stage$prefix

make_or_finish "$stage/install.log" install PREFIX="$prefix" DESTDIR="$stage"
koe=$root/bin/koe

# --- files
# The subcommands koe --help lists, and help, which argument-parser adds to every command.
subcommands=$("$koe" --help | awk '/^SUBCOMMANDS:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
subcommands=${subcommands:+$subcommands help}
expected=$( {
    echo bin/koe
    echo share/man/man1/koe.1
    for command in $subcommands; do echo "share/man/man1/koe.$command.1"; done
    echo share/bash-completion/completions/koe
    echo share/zsh/site-functions/_koe
    echo share/fish/vendor_completions.d/koe.fish
    [ -d "$repository/.build/plugins/koe.lv2" ] &&
        (cd "$repository/.build/plugins" && find koe.lv2 -type f | sed 's|^|lib/lv2/|')
    [ -f "$repository/.build/plugins/koe-ladspa.so" ] && echo lib/ladspa/koe-ladspa.so
} | sort)
installed=$(cd "$root" && find . -type f | sed 's|^\./||' | sort)
if [ -z "$subcommands" ]; then
    fail "files: koe --help lists no subcommands"
elif [ "$installed" = "$expected" ]; then
    pass "files      $(echo "$installed" | wc -l) files: $(echo "$installed" | tr '\n' ' ')"
else
    fail "files: installed and expected differ: $(diff <(echo "$expected") <(echo "$installed") | grep '^[<>]' | tr '\n' ' ')"
fi

# --- version
version=$("$koe" --version)
declared=$(sed -n 's/.*static let version = "\([^"]*\)".*/\1/p' "$repository"/Sources/*/*.swift | head -1)
if commit=$(git -C "$repository" rev-parse --short=7 HEAD 2>/dev/null); then
    pattern="^$declared \\($commit(-dirty)?\\)\$"
else
    pattern="^$declared \\(unknown\\)\$"
fi
if [ -n "$declared" ] && [[ $version =~ $pattern ]]; then
    pass "version    koe --version: $version"
else
    fail "version: koe --version says '$version', expected /$pattern/"
fi

# --- man
man_failures=""
for page in koe $(for command in $subcommands; do echo "koe.$command"; done); do
    file=$root/share/man/man1/$page.1
    name=${page/./ }
    if ! text=$(MANWIDTH=100 man -l "$file" 2>/dev/null); then
        man_failures+="$page: man -l exited non-zero; "
    elif ! grep -q '^NAME' <<<"$text" || ! grep -q '^SYNOPSIS' <<<"$text" || ! grep -qF "$name" <<<"$text"; then
        man_failures+="$page: no NAME, SYNOPSIS or '$name' in what man renders; "
    fi
done
if [ -z "$man_failures" ]; then
    pass "man        man -l renders koe.1 and $(echo $subcommands | wc -w) subcommand pages"
else
    fail "man: $man_failures"
fi

# --- bash
bash_completion=$root/share/bash-completion/completions/koe
# complete LINE: what the completion offers for the last word of LINE, as bash would ask it.
complete_line() {
    bash -c 'source "$1"; read -ra COMP_WORDS <<<"$2"; [[ $2 == *" " ]] && COMP_WORDS+=("");
             COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMP_LINE=$2; COMP_POINT=${#2}; COMPREPLY=();
             _koe koe "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"; echo "${COMPREPLY[*]}"' \
        complete-line "$bash_completion" "$1" 2>&1
}
registered=$(bash -c 'source "$1" && complete -p koe' bash "$bash_completion" 2>&1)
first=$(complete_line "koe ")
options=$(complete_line "koe batch --sha")
if [[ $registered != *"-F _koe koe" ]]; then
    fail "bash: complete -p koe says '$registered'"
elif [[ " $first " != *" convert "* || " $first " != *" batch "* ]]; then
    fail "bash: 'koe <TAB>' offers '$first', not the subcommands"
elif [ "$options" != "--shard" ]; then
    fail "bash: 'koe batch --sha<TAB>' offers '$options', not --shard"
else
    pass "bash       $registered; 'koe <TAB>': $first; 'koe batch --sha<TAB>': $options"
fi

# --- zsh, fish
zsh_script=$root/share/zsh/site-functions/_koe
fish_script=$root/share/fish/vendor_completions.d/koe.fish
fish_offers=$(fish -c 'source $argv[1]; complete -C "koe batch --sha"' "$fish_script" 2>&1 | cut -f1)
zsh_registered=$(zsh -f -c 'fpath=("$1" $fpath); autoload -U compinit; compinit -u -D; print -r -- $_comps[koe]' \
    zsh "$(dirname "$zsh_script")" 2>&1)
if ! command -v zsh >/dev/null || ! command -v fish >/dev/null; then
    fail "zsh, fish: not installed (make test-install installs them)"
elif [ "$(head -1 "$zsh_script")" != "#compdef koe" ] || ! zsh -n "$zsh_script"; then
    fail "zsh: _koe does not start with '#compdef koe' or does not parse (zsh -n)"
elif [ "$zsh_registered" != "_koe" ]; then
    fail "zsh: compinit with share/zsh/site-functions in fpath gives koe '$zsh_registered', not _koe"
elif ! fish -n "$fish_script"; then
    fail "fish: fish -n rejects koe.fish"
elif [ "$fish_offers" != "--shard" ]; then
    fail "fish: 'koe batch --sha<TAB>' offers '$fish_offers', not --shard"
else
    pass "zsh, fish  zsh: compinit finds _koe for koe; fish: 'koe batch --sha<TAB>': $fish_offers"
fi

# --- uninstall
if ! "$make" -C "$repository" --no-print-directory uninstall PREFIX="$prefix" DESTDIR="$stage" >"$stage/uninstall.log" 2>&1; then
    fail "uninstall: make uninstall failed: $(tail -1 "$stage/uninstall.log")"
else
    left=$(cd "$root" && find . -type f | sed 's|^\./||')
    if [ -z "$left" ]; then
        pass "uninstall  removed all $(echo "$installed" | wc -l) files"
    else
        fail "uninstall: left $(echo "$left" | tr '\n' ' ')"
    fi
fi

finish
