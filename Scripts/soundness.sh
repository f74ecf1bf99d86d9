#!/usr/bin/env bash
# Harbor — soundness checks the compiler does not make. Prints one
# `file:line: rule: what` per finding and exits 1 if there is any.
#
# 1. libc — only Sources/HarborSystem and the C shim
#    (Sources/CHarborLinux) call the C library or the shim. Checked in every
#    library target (everything in Sources/ but the System folder and the
#    shim); the executables (Sources/harbor-*, harbord, harbor) are not:
#    harbor-bench measures the raw Linux floor, harbor-adversary writes raw
#    packets and system calls on purpose, and the tools and probes sit on top
#    of the libraries, which are what users link. A file breaks the rule if
#    a. it imports CHarborLinux, or names anything `charbor_`;
#    b. it imports Glibc (or Musl, Darwin) without saying, on the import's
#       line, that it takes only types and constants from it:
#           import Glibc  // types only: pid_t, uid_t
#           import Glibc  // constants only: EBUSY
#       (the C typedefs of a public API, pid_t and uid_t, and errno values
#       to match a SystemError against have no other spelling);
#    c. it calls a function the C library exports: any name `nm -D` lists in
#       libc.so.6, called as a free function (`read(`, `Glibc.read(`; not a
#       method `x.read(` nor a declaration `func read(`), unless its own
#       target declares a function of that name (so `send(answer, …)`, a
#       method called on self, is not mistaken for send(2)). Checked in every
#       file that can reach libc: one importing Glibc, CSystemd (its module
#       map re-exports the C headers), Foundation or Dispatch.
#       Comments and string literals are not read.
# 2. @unchecked Sendable — says why, in a comment on the same line, the line
#    above, or (the repository's habit) a `// @unchecked:` comment as the
#    first line of the body. Sources/, Tests/ and Fuzz/.
# 3. One type per file — a .swift file in Sources/ declares at most one
#    top-level type (a class, struct, enum, actor or protocol starting its
#    line; extensions aside, nested types are the type's own), so each
#    concept has a file named after it. The files that declared more when
#    the rule came are listed with their count in
#    Scripts/one-type-per-file.baseline: that list only shrinks. A file not
#    listed with two types, a listed file with more than its count, and a
#    listed file with fewer (lower or remove its line) are findings.
# 4. Deadline — every root test suite (an `@Suite` at the start of a line in
#    Tests/: nested suites are indented, and inherit it) carries a
#    `.deadline` (HarborTestSupport's TestDeadline), so every test ends by
#    its own deadline instead of stalling the run.
#
# Usage: Scripts/soundness.sh        (from anywhere; exits 0 when clean)
set -uo pipefail
cd "$(dirname "$0")/.."

findings=$(mktemp)
libc_names=$(mktemp)
trap 'rm -f "$findings" "$libc_names"' EXIT

# --- 1. libc ---------------------------------------------------------------
libc=$(ldconfig -p 2>/dev/null | awk '/libc\.so\.6 / { print $NF; exit }')
for candidate in "$libc" /lib/x86_64-linux-gnu/libc.so.6 /lib/aarch64-linux-gnu/libc.so.6 /usr/lib64/libc.so.6; do
    if [[ -n "$candidate" && -e "$candidate" ]]; then libc=$candidate; break; fi
done
if ! command -v nm >/dev/null || [[ ! -e "$libc" ]]; then
    echo "soundness: cannot list libc's functions (need nm and libc.so.6)" >&2
    exit 2
fi
# Functions only, public names only; Swift's own global functions of the
# same name (abs) are not libc calls.
nm -D --defined-only "$libc" | awk '$2 ~ /^[TWi]$/ { sub(/@.*/, "", $3); print $3 }' \
    | grep -E '^[a-z][a-z0-9_]*$' | grep -v -x -E 'abs|labs' | sort -u >"$libc_names"

library_files() {
    find Sources -name '*.swift' \
        -not -path 'Sources/HarborSystem/*' \
        -not -path 'Sources/CHarborLinux/*' \
        -not -path 'Sources/harbor-*' -not -path 'Sources/harbord/*' -not -path 'Sources/harbor/*' | sort
}

# The target a library file belongs to, and the function names it declares
# (outside System, whose wrappers are always called qualified).
declared_names() {
    local target=$1
    find "Sources/$target" -name '*.swift' -not -path 'Sources/HarborSystem/*' -print0 \
        | xargs -0 grep -h -o -E 'func +[A-Za-z_][A-Za-z0-9_]*' | awk '{ print $2 }' | sort -u
}

declare -A declared_cache
while IFS= read -r file; do
    # a. The shim.
    grep -n -E '^\s*(@[a-zA-Z_]+ +)*import +CHarborLinux\b|charbor_' "$file" \
        | sed -E "s|^([0-9]+):.*|$file:\1: libc: the C shim is called only from Sources/HarborSystem|" >>"$findings"
    # b. A C library imported for more than its types and constants.
    grep -n -E '^\s*(@[a-zA-Z_]+ +)*import +(Glibc|Musl|Darwin)\b' "$file" \
        | grep -v -E '//\s*(types|constants)( and (types|constants))? only' \
        | sed -E "s|^([0-9]+):.*|$file:\1: libc: import Glibc only for types and constants, and say so: import Glibc  // types only: pid_t|" >>"$findings"
    # c. Calls, in files that can reach libc at all.
    grep -q -E '^\s*(@[a-zA-Z_]+ +)*import +(Glibc|Musl|Darwin|CSystemd|Foundation|Dispatch)\b' "$file" || continue
    target=${file#Sources/}
    target=${target%%/*}
    if [[ -z "${declared_cache[$target]+set}" ]]; then
        declared_cache[$target]=$(declared_names "$target" | tr '\n' ' ')
    fi
    awk -v file="$file" -v declared="${declared_cache[$target]}" '
        FNR == NR { libc[$1] = 1; next }
        FNR == 1 { n = split(declared, names, " "); for (i = 1; i <= n; i++) own[names[i]] = 1 }
        {
            line = $0
            gsub(/\\"/, "", line)                  # escaped quotes inside strings
            gsub(/"[^"]*"/, "\"\"", line)          # string literals
            sub(/\/\/.*/, "", line)                # comments
            rest = line
            while (match(rest, /[A-Za-z_][A-Za-z0-9_.]*[ \t]*\(/)) {
                token = substr(rest, RSTART, RLENGTH)
                before = RSTART > 1 ? substr(rest, RSTART - 1, 1) : ""
                prefix = substr(rest, 1, RSTART - 1)
                rest = substr(rest, RSTART + RLENGTH)
                sub(/[ \t]*\($/, "", token)
                if (token ~ /^(Glibc|Musl|Darwin)\./) { sub(/^[A-Za-z]+\./, "", token) }
                else if (token ~ /\./ || before == ".") continue
                if (prefix ~ /func[ \t]+$/ || prefix ~ /case[ \t]+$/) continue
                if ((token in libc) && !(token in own)) {
                    printf "%s:%d: libc: %s() is a C library call; wrap it in Sources/HarborSystem\n", file, FNR, token
                }
            }
        }
    ' "$libc_names" "$file" >>"$findings"
done < <(library_files)

# --- 2. @unchecked Sendable --------------------------------------------------
find Sources Tests Fuzz -name '*.swift' 2>/dev/null | sort | while IFS= read -r file; do
    awk -v file="$file" '
        { lines[FNR] = $0 }
        END {
            for (i = 1; i <= FNR; i++) {
                code = lines[i]
                sub(/\/\/.*/, "", code)
                if (code !~ /@unchecked[ \t]+Sendable/) continue
                if (lines[i] ~ /\/\//) continue
                if (i > 1 && lines[i - 1] ~ /^[ \t]*\/\//) continue
                if (i < FNR && lines[i + 1] ~ /^[ \t]*\/\/[ \t]*@unchecked/) continue
                printf "%s:%d: unchecked: @unchecked Sendable needs a comment saying why it is safe (same line, line above, or a `// @unchecked:` first line)\n", file, i
            }
        }
    ' "$file"
done >>"$findings"

# --- 3. One type per file ---------------------------------------------------------
type_pattern='^(@[A-Za-z_]+(\([^)]*\))? +)*((public|package|internal|fileprivate|private|final|indirect|nonisolated|open) +)*(class|struct|enum|actor|protocol) +[A-Za-z_]'
baseline=Scripts/one-type-per-file.baseline
find Sources -name '*.swift' | sort | while IFS= read -r file; do
    count=$(grep -cE "$type_pattern" "$file")
    allowed=$(awk -v f="$file" '$1 == f { print $2 }' "$baseline")
    names=$(grep -oE "$type_pattern[A-Za-z0-9_]*" "$file" | awk '{ print $NF }' | paste -sd, -)
    if [[ -z $allowed ]]; then
        if ((count > 1)); then echo "$file:1: types: $count top-level types ($names): one type per file, split it"; fi
    elif ((count > allowed)); then
        echo "$file:1: types: $count top-level types ($names), $allowed in $baseline: split the new one out"
    elif ((count < allowed)); then
        echo "$file:1: types: $count top-level types, $allowed in $baseline: lower its count there (remove the line at 1)"
    fi
done >>"$findings"
awk '!/^#/ && NF { print $1 }' "$baseline" | while IFS= read -r file; do
    [[ -f $file ]] || echo "$baseline:1: types: $file no longer exists: remove its line"
done >>"$findings"

# --- 4. Deadline ---------------------------------------------------------------
grep -rn --include='*.swift' -E '^@Suite' Tests | grep -v -E '\.deadline\b' \
    | sed -E 's|^([^:]+:[0-9]+):.*|\1: deadline: a root suite carries .deadline (TestDeadline), so a stuck test fails by it|' \
    >>"$findings"

if [[ -s "$findings" ]]; then
    cat "$findings"
    echo "soundness: $(wc -l <"$findings") finding(s):" \
        "$(grep -c ': libc: ' "$findings") libc," \
        "$(grep -c ': unchecked: ' "$findings") unchecked Sendable," \
        "$(grep -c ': types: ' "$findings") one type per file," \
        "$(grep -c ': deadline: ' "$findings") deadline" >&2
    exit 1
fi
echo "soundness: libc only in HarborSystem and the shim; every @unchecked Sendable justified; one type per file (Scripts/one-type-per-file.baseline only shrinks); every root test suite has a deadline"
