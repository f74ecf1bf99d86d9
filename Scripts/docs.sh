#!/usr/bin/env bash
# Harbor — builds the DocC documentation of every library target with
# swift-docc-plugin, as one site, and fails on any DocC warning (a broken
# symbol link, an unknown parameter, a missing article) or if a type named
# on one module's page does not link to the module that declares it.
#
#   bash Scripts/docs.sh [--scratch-path DIR] [target...]
#
# Every library product has a catalog, Sources/<target>/<target>.docc (a
# library without one fails the script). With every target (the default)
# the site is one archive, <scratch>/plugins/Swift-DocC/outputs/Harbor.doccarchive
# (swift-docc-plugin's combined documentation: each module's symbols link
# to the modules it uses); view it with
#   python3 -m http.server --directory <that archive> 8000
# and http://localhost:8000/documentation/harbor. Named targets build one
# archive each, <target>.doccarchive beside it. The scratch folder
# defaults to .build, so after Scripts/build.sh the libraries are already
# compiled and only the symbol graphs and DocC itself run.
set -euo pipefail
cd "$(dirname "$0")/.."

scratch=.build
targets=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --scratch-path) scratch="$2"; shift ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        -*) echo "docs: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1") ;;
    esac
    shift
done
combined=()
if [[ ${#targets[@]} -eq 0 ]]; then
    combined=(--enable-experimental-combined-documentation)
    # Every library product's target, each of which must have a catalog.
    missing=()
    for target in $(sed -n 's/^ *\.library(name: "[^"]*", targets: \["\([^"]*\)"\]).*/\1/p' Package.swift); do
        if [[ -d Sources/$target/$target.docc ]]; then targets+=("$target"); else missing+=("$target"); fi
    done
    if [[ ${#missing[@]} -gt 0 ]]; then
        echo "docs: FAILED: no catalog for ${missing[*]} (add Sources/<target>/<target>.docc)" >&2
        exit 1
    fi
fi

mkdir -p "$scratch"
log=$scratch/docs.log
echo "docs: ${targets[*]} (log: $log)"
start=$SECONDS
# One plugin run for every target: the plugin is resolved and built once and
# the targets compiled once (about half the time of one run per target).
args=()
for target in "${targets[@]}"; do args+=(--target "$target"); done
set +e
swift package --scratch-path "$scratch" --disable-sandbox \
    generate-documentation "${args[@]}" ${combined[@]+"${combined[@]}"} --warnings-as-errors >"$log" 2>&1
status=$?
set -e
# DocC prints its findings as `warning:`/`error:` lines, each after the
# "Building documentation for 'X'" line of its target; with
# --warnings-as-errors a warning already fails the command, and the grep
# catches anything that still slips through as a warning.
findings=$(grep -E "^(Building documentation for|.*(warning|error):)" "$log" \
    | grep -v -E "^\[[0-9]+/[0-9]+\]" || true)
if [[ $status -ne 0 ]] || grep -q -E "(warning|error):" <<<"$findings"; then
    echo "$findings" | head -80 >&2
    [[ -n $findings ]] || tail -30 "$log" >&2
    echo "docs: FAILED (exit $status); the full log is $log" >&2
    exit 1
fi
if [[ ${#combined[@]} -gt 0 ]]; then
    # One site: every module in the one archive, and a type from another
    # module linked, not plain text (HarborBootstrap's `lookUp` returns
    # HarborPorts' `SendRight`).
    site=$scratch/plugins/Swift-DocC/outputs/Harbor.doccarchive
    for target in "${targets[@]}"; do
        module=$(tr '[:upper:]' '[:lower:]' <<<"$target")
        if [[ ! -f $site/data/documentation/$module.json ]]; then
            echo "docs: FAILED: the site $site has no page for $target" >&2
            exit 1
        fi
    done
    page="$site/data/documentation/harborbootstrap/bootstrapclient/lookup(_:).json"
    if ! grep -q '"identifier":"doc:\\/\\/HarborPorts\\/documentation\\/HarborPorts\\/SendRight"' "$page" 2>/dev/null; then
        echo "docs: FAILED: BootstrapClient.lookUp(_:) on the site does not link SendRight to HarborPorts ($page)" >&2
        exit 1
    fi
    echo "docs: one site, ${#targets[@]} modules linked across, built warning-free in $((SECONDS - start)) s: $site"
    echo "docs: view it: python3 -m http.server --directory $site 8000, then http://localhost:8000/documentation/harbor"
else
    echo "docs: ${#targets[@]} catalog(s) built warning-free in $((SECONDS - start)) s"
fi
