#!/usr/bin/env bash
# cli_options.sh BIN — what the option tables promise: every command of
# the command table has a --help of at most 24 lines of at most 80 columns;
# every option its help lists is accepted by its parser (it does not answer
# "unknown option"); an option a command does not have is refused the same
# way everywhere; and the shell completion scripts made from the same
# tables work (bash: commands, options, values, files) or at least parse
# (zsh, fish, when installed). The man page, generated from the same
# tables, is checked by man_page.py.
set -u
BIN=$1
fail=0
bad() { echo "FAIL: $*"; fail=1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# nothing these runs do may reach a network or a real state folder
export TABLETALK_STATE_DIR=$work/state TABLETALK_DATA_DIR=$work/data TABLETALK_CACHE_DIR=$work/cache
export HF_ENDPOINT=http://127.0.0.1:9 TABLETALK_BASE_URL= TABLETALK_MODEL_PATH= NO_COLOR=1
cd "$work"

main_help=$("$BIN" --help)
[ "$(printf '%s\n' "$main_help" | wc -l)" -le 24 ] || bad "tabletalk --help is longer than 24 lines"
[ "$(printf '%s\n' "$main_help" | wc -L)" -le 80 ] || bad "tabletalk --help is wider than 80 columns"
cmds=$("$BIN" --help | sed -n '/^Commands:/,/^$/p' | awk 'NF && !/^Commands:/ {print $1}')
[ -n "$cmds" ] || bad "no commands in tabletalk --help"

for cmd in $cmds; do
  help=$("$BIN" "$cmd" --help 2>&1); rc=$?
  [ $rc -eq 0 ] || bad "$cmd --help exits $rc"
  [ "$help" = "$("$BIN" help "$cmd")" ] || bad "tabletalk help $cmd differs from $cmd --help"
  lines=$(printf '%s\n' "$help" | wc -l)
  cols=$(printf '%s\n' "$help" | wc -L)
  [ "$lines" -le 24 ] || bad "$cmd --help has $lines lines (at most 24)"
  [ "$cols" -le 80 ] || bad "$cmd --help is $cols columns wide (at most 80)"
  grep -q -- "--help" <<<"$help" || bad "$cmd --help does not list --help"
  # a command's first argument, where the parser comes after it
  sub=()
  [ "$cmd" = eval ] && sub=(report)
  # "--name" then " META" (one space, not an option) when it takes a value;
  # the options' help text is two or more spaces away
  opts=$(printf '%s\n' "$help" | grep -v '^Usage:\|^       tabletalk' |
    grep -oE -- '(^| )--[a-z][a-z0-9-]*(\[=[^]]*\])?( [^ -][^ ]*)?' | sed 's/^ //')
  [ -n "$opts" ] || bad "$cmd --help lists no options"
  while IFS= read -r spec; do
    name=${spec%% *}
    name=${name%%\[*}
    [ "$name" = --help ] && continue
    args=("$name")
    [ "$spec" != "${spec#* }" ] && args+=(1)
    # extra arguments make every command stop after parsing, before work
    out=$(timeout 20 "$BIN" "$cmd" "${sub[@]}" "${args[@]}" x1 x2 x3 x4 x5 </dev/null 2>&1)
    grep -q "unknown option" <<<"$out" && bad "$cmd lists $name in --help but does not accept it: $out"
  done <<<"$opts"
  # short spellings listed as "-x, --name"
  for s in $(printf '%s\n' "$help" | grep -oE '^  -[a-zA-Z],' | tr -d ' ,'); do
    [ "$s" = -h ] && continue
    out=$(timeout 20 "$BIN" "$cmd" "${sub[@]}" "$s" 1 x1 x2 x3 x4 x5 </dev/null 2>&1)
    grep -q "unknown option" <<<"$out" && bad "$cmd lists $s but does not accept it: $out"
  done
  out=$("$BIN" "$cmd" "${sub[@]}" --no-such-option x 2>&1); rc=$?
  [ $rc -eq 2 ] || bad "$cmd --no-such-option exits $rc, not 2"
  grep -q "^tabletalk $cmd: unknown option '--no-such-option'" <<<"$out" || bad "$cmd: unexpected error for an unknown option: $out"
  grep -q "tabletalk $cmd --help" <<<"$out" || bad "$cmd: the usage error does not point at --help: $out"
done

# options that serve-mcp, eval and doctor accepted and ignored are gone
for cmd in serve-mcp doctor; do
  for o in --size --chart-format --no-preview --thread --show-thinking; do
    "$BIN" "$cmd" --help | grep -qw -- "$o" && bad "$cmd --help lists $o, which it ignores"
  done
done
for o in --size --chart-format --no-preview --thread --show-thinking --immutable --knowledge; do
  "$BIN" eval --help | grep -qw -- "$o" && bad "eval --help lists $o, which it ignores"
done

# ---- completion ----------------------------------------------------------
"$BIN" completion bash >bash.sh || bad "completion bash fails"
check_bash() { # expected words... -- the command line, the last word being completed
  local want=() line=()
  while [ "$1" != -- ]; do want+=("$1"); shift; done
  shift
  got=$(bash -c 'source ./bash.sh; COMP_WORDS=("$@"); COMP_CWORD=$(($#-1)); _tabletalk; echo "${COMPREPLY[*]}"' _ "$@")
  [ "$got" = "${want[*]}" ] || bad "bash completion of '$*': got '$got', want '${want[*]}'"
}
check_bash schema -- tabletalk sch
check_bash --budget -- tabletalk schema --b
check_bash --format -- tabletalk ask --form
check_bash png svg -- tabletalk chat --chart-format ""
check_bash spider behaviors report schema -- tabletalk eval ""
check_bash latest list -- tabletalk trace ""
check_bash bash zsh fish -- tabletalk completion ""
mkdir -p dbs && touch dbs/sales.sqlite
check_bash dbs/sales.sqlite -- tabletalk sql dbs/sa
check_bash dbs/sales.sqlite -- tabletalk ask --state-dir x dbs/s
check_bash dbs -- tabletalk trace --state-dir db
# every command and each of its options comes from the tables
for cmd in $cmds; do
  got=$(bash -c 'source ./bash.sh; COMP_WORDS=(tabletalk "$1" --); COMP_CWORD=2; _tabletalk; echo "${COMPREPLY[*]}"' _ "$cmd")
  for name in $("$BIN" "$cmd" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
    grep -qw -- "$name" <<<"$got" || bad "bash completion of 'tabletalk $cmd --' lacks $name"
  done
done
if command -v zsh >/dev/null; then
  "$BIN" completion zsh >_tabletalk && zsh -n _tabletalk || bad "the zsh completion does not parse"
  zsh -c 'autoload -U compinit; compinit -u -d ./zcd; source ./_tabletalk; [[ ${_comps[tabletalk]} == _tabletalk ]]' ||
    bad "the zsh completion does not register _tabletalk"
else
  echo "skip: zsh is not installed"
fi
if command -v fish >/dev/null; then
  "$BIN" completion fish >tabletalk.fish && fish -n tabletalk.fish || bad "the fish completion does not parse"
  got=$(HOME=$work fish -c 'source tabletalk.fish; complete -C"tabletalk schema --b"' | cut -f1)
  [ "$got" = --budget ] || bad "fish completion of 'tabletalk schema --b': got '$got'"
else
  echo "skip: fish is not installed"
fi
out=$("$BIN" completion tcsh 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "choose bash, zsh or fish" <<<"$out" || bad "completion tcsh: $rc $out"

[ $fail -eq 0 ] && echo "PASS: every command's help fits 24x80, its options parse; completion works"
exit $fail
