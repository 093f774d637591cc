#!/usr/bin/env python3
"""What ptxas makes of two compilers' PTX (issue 16: a faster LLVM pipeline
must not make the machine code worse).

For every kernel variant of VARIANTS (default scripts/baseline-variants.txt,
FILE [-D NAME=VALUE]... a line) at --target=sm_80 and sm_90a, emits PTX with
the OLD and the NEW command (each a shell command prefix to which
`--emit=ptx --target=T [-D ...] FILE` is appended, e.g. `build/tl-opt` or
`env TL_LLVM_PASSES=... build/tl-opt`).  Where the two PTX texts differ, each
is assembled by ptxas -v (sm_80 PTX for -arch=sm_80 and -arch=sm_90a, sm_90a
PTX for -arch=sm_90a) and disassembled by nvdisasm, and the table gives, old ->
new: registers, spill bytes (stores + loads), the SASS instruction count of the
whole kernel and of its main loop (the innermost backward-branch range with
the most HMMA/HGMMA instructions, else the longest one).  A row is 'worse'
when any of these grew.  Exit 0 when no row is worse, 1 otherwise.

usage: scripts/ptx-quality.py --old CMD --new CMD [--variants FILE]
       [--filter REGEX] [--keep DIR] [--jobs N]
Needs ptxas (TL_PTXAS, else /usr/local/cuda/bin/ptxas) and nvdisasm (NVDISASM,
else on PATH; `pip download nvidia-cuda-nvdisasm --no-deps` has it).
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

PTXAS = os.environ.get('TL_PTXAS', '/usr/local/cuda/bin/ptxas')
NVDISASM = os.environ.get('NVDISASM') or shutil.which('nvdisasm') or 'nvdisasm'


def variants(path):
    for line in open(path):
        line = line.split('#', 1)[0].strip()
        if line:
            argv = shlex.split(line)
            yield argv[0], argv[1:]


def emit(cmd, target, file, defs):
    env = dict(os.environ, TL_CACHE='0')
    r = subprocess.run(shlex.split(cmd) + ['--emit=ptx', '--target=' + target] + defs + [file],
                       capture_output=True, text=True, env=env)
    return r.stdout if r.returncode == 0 else None


def sass_counts(text):
    """(total instructions, main-loop instructions) of nvdisasm's text."""
    labels, ins = {}, []
    for line in text.split('\n'):
        m = re.match(r'\s*\.(L_x_\d+):', line)
        if m:
            labels[m.group(1)] = len(ins)
            continue
        m = re.match(r'\s+/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
        if m:
            ins.append(m.group(2))
    # EXIT-padding NOPs after the last real instruction are not code
    while ins and ins[-1].startswith('NOP'):
        ins.pop()
    loops = []
    for i, t in enumerate(ins):
        mm = re.search(r'\bBRA\b.*?`\(\.(L_x_\d+)\)', t)
        if mm and labels.get(mm.group(1), 1 << 30) <= i:
            s = labels[mm.group(1)]
            body = ins[s:i + 1]
            mma = sum(('HMMA' in x or 'HGMMA' in x) for x in body)
            loops.append((s, i + 1, mma))
    best = None
    for s, e, mma in loops:
        inner = not any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2, _ in loops)
        key = (mma, inner, e - s)
        if best is None or key > best[0]:
            best = (key, e - s)
    return len(ins), best[1] if best else 0


def assemble(ptx, arch, tmp, tag):
    p = os.path.join(tmp, tag + '.ptx')
    cubin = os.path.join(tmp, tag + '.' + arch + '.cubin')
    open(p, 'w').write(ptx)
    r = subprocess.run([PTXAS, '-v', '-arch=' + arch, '-o', cubin, p], capture_output=True, text=True)
    if r.returncode:
        return None
    regs = max((int(x) for x in re.findall(r'Used (\d+) registers', r.stderr)), default=0)
    spill = sum(int(a) + int(b) for a, b in re.findall(r'(\d+) bytes spill stores, (\d+) bytes spill loads',
                                                        r.stderr))
    d = subprocess.run([NVDISASM, '-c', cubin], capture_output=True, text=True)
    total, loop = sass_counts(d.stdout)
    return regs, spill, total, loop


def one(job):
    args, idx, file, defs, target, tmp = job
    old = emit(args.old, target, file, defs)
    new = emit(args.new, target, file, defs)
    name = ' '.join([file] + defs)
    if old is None or new is None:
        return [(name, target, '-', 'refused' if old is None and new is None else 'ONE SIDE FAILS', None, None)]
    if old == new:
        return [(name, target, '-', 'same', None, None)]
    tag = '%03d_%s' % (idx, target)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        open(os.path.join(args.keep, tag + '.old.ptx'), 'w').write(old)
        open(os.path.join(args.keep, tag + '.new.ptx'), 'w').write(new)
    rows = []
    for arch in (['sm_80', 'sm_90a'] if target == 'sm_80' else [target]):
        a = assemble(old, arch, tmp, tag + '_old')
        b = assemble(new, arch, tmp, tag + '_new')
        if a is None or b is None:
            rows.append((name, target, arch, 'PTXAS FAILS', a, b))
            continue
        worse = any(y > x for x, y in zip(a, b))
        better = any(y < x for x, y in zip(a, b))
        rows.append((name, target, arch, 'WORSE' if worse else ('better' if better else 'equal'), a, b))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--old', required=True)
    ap.add_argument('--new', required=True)
    ap.add_argument('--variants', default='scripts/baseline-variants.txt')
    ap.add_argument('--filter', default='')
    ap.add_argument('--targets', default='sm_80,sm_90a')
    ap.add_argument('--keep', default='')
    ap.add_argument('--jobs', type=int, default=2)
    args = ap.parse_args()
    for tool in (PTXAS, NVDISASM):
        if not (os.access(tool, os.X_OK) or shutil.which(tool)):
            sys.exit('ptx-quality: %s not found (TL_PTXAS / NVDISASM give the paths)' % tool)
    tmp = tempfile.mkdtemp(prefix='ptxq')
    jobs = []
    for idx, (file, defs) in enumerate(variants(args.variants)):
        if args.filter and not re.search(args.filter, ' '.join([file] + defs)):
            continue
        for t in args.targets.split(','):
            jobs.append((args, idx, file, defs, t, tmp))
    bad = 0
    nsame = 0
    print('%-70s %-6s %-6s %-7s %-9s %-9s %-11s %-9s' % ('variant', 'target', 'arch', 'verdict', 'regs', 'spill',
                                                         'sass', 'loop'))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        for rows in ex.map(one, jobs):
            for name, target, arch, verdict, a, b in rows:
                if verdict == 'same':
                    nsame += 1
                    continue
                if verdict not in ('equal', 'better', 'refused'):
                    bad += 1
                if a and b:
                    f = ['%d>%d' % (x, y) if x != y else str(x) for x, y in zip(a, b)]
                    print('%-70s %-6s %-6s %-7s %-9s %-9s %-11s %-9s' % (name[:70], target, arch, verdict, *f))
                else:
                    print('%-70s %-6s %-6s %s' % (name[:70], target, arch, verdict))
                sys.stdout.flush()
    shutil.rmtree(tmp, ignore_errors=True)
    print('ptx-quality: %d outputs identical, %d rows worse or failing' % (nsame, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
