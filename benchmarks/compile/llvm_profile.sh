#!/usr/bin/env bash
# Where LLVM spends a compile (issue 16, compile time): runs one
# `tl-opt --emit=ptx` of FILE under valgrind's callgrind and prints the
# instructions executed (deterministic, unlike times on a shared machine)
# in each part of tl_nvptx_emit_ex: our IR building, the verifier, the
# optimisation pipeline (LLVMRunPasses) with its passes summed over their
# runs, and PTX emission (LLVMTargetMachineEmitToMemoryBuffer) with
# instruction selection, loop strength reduction and the other named
# codegen passes.  It is one cold process: the LLVM rows include LLVM's
# one-time set-up (warm_up_llvm: ~3 M instructions, not part of a warm
# compile).
# Usage: benchmarks/compile/llvm_profile.sh FILE [tl-opt options, e.g. --target=sm_90a -D K=512]
# Needs valgrind (callgrind_annotate); TL_OPT selects the binary (default build/tl-opt).
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 FILE [tl-opt options]" >&2; exit 2; }
tlopt=${TL_OPT:-build/tl-opt}
command -v valgrind >/dev/null || { echo "llvm_profile: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TL_CACHE=0 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$tlopt" --emit=ptx "$@" -o /dev/null \
  2>"$tmp/log" || { cat "$tmp/log" >&2; exit 1; }
callgrind_annotate --inclusive=yes --threshold=100 "$tmp/cg" 2>/dev/null >"$tmp/inc"
python3 - "$tmp/inc" "$*" <<'PY'
import re, sys
inc, what = sys.argv[1:]
cost = {}
for line in open(inc):
    m = re.match(r'\s*([\d,]+) \([ \d.]+%\)\s+\S*?:(.*?) \[', line)
    if m:
        cost.setdefault(m.group(2), int(m.group(1).replace(',', '')))
def c(pat):
    return sum(v for k, v in cost.items() if re.fullmatch(pat, k))
total = c(r'tl_nvptx_emit_ex')
rows = [('our LLVM IR building (tl_nvptx_build)', c(r'tl_nvptx_build')),
        ('LLVMVerifyModule', c(r'LLVMVerifyModule')),
        ('optimisation pipeline (LLVMRunPasses)', c(r'LLVMRunPasses')),
        ('PTX emission (LLVMTargetMachineEmitToMemoryBuffer)', c(r'LLVMTargetMachineEmitToMemoryBuffer'))]
print('llvm_profile: %s (callgrind: instructions executed, in millions)' % what)
print('%-58s %10s %6s' % ('part of tl_nvptx_emit_ex', 'M instr', 'share'))
for n, v in rows: print('%-58s %10.1f %5.1f%%' % (n, v / 1e6, 100.0 * v / total if total else 0))
print('%-58s %10.1f' % ('total tl_nvptx_emit_ex', total / 1e6))
print('\npasses (summed over runs; new pass manager, then codegen):')
passes = {}
for k, v in cost.items():
    m = re.fullmatch(r'llvm::(\w+Pass)::run\(.*', k)
    if m and m.group(1) not in ('ModuleToFunctionPassAdaptor', 'FunctionToLoopPassAdaptor'):
        passes[m.group(1)] = max(passes.get(m.group(1), 0), v)
named = {'SelectionDAGISel::runOnMachineFunction': 'codegen: instruction selection (SelectionDAG)',
         'LPPassManager::runOnFunction': 'codegen: loop passes (loop strength reduction)',
         'NaryReassociatePass::doOneIteration': 'codegen: n-ary reassociation',
         'AsmPrinter::emitFunctionBody': 'codegen: PTX printing',
         '(anonymous namespace)::NVPTXProxyRegErasure::runOnMachineFunction': 'codegen: proxy-register erasure (i32<->f16x2 bitcasts)',
         '(anonymous namespace)::MachineCSE::runOnMachineFunction': 'codegen: machine CSE',
         '(anonymous namespace)::StraightLineStrengthReduce::runOnFunction': 'codegen: straight-line strength reduction',
         'MachineFunctionPass::runOnFunction': 'codegen: all machine passes (ISel included)'}
for k, n in named.items():
    passes[n] = c((r'' if k.startswith('(') else r'llvm::') + re.escape(k) + r'\(.*')
for n, v in sorted(passes.items(), key=lambda x: -x[1]):
    if v >= total * 0.005: print('  %-56s %10.1f %5.1f%%' % (n, v / 1e6, 100.0 * v / total))
PY
