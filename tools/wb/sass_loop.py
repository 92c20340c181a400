"""wb.sass_loop - `python3 -m wb sass-loop`: the hottest loop of a kernel's SASS, and what instructions it is made of.

    cuobjdump -sass -arch sm_90 ./06_tensor_core_wmma/06_tensor_core_wmma | \\
        PYTHONPATH=tools python3 -m wb sass-loop 'Tf32InputsELi128ELi128ELi16' [--listing]

Reads `cuobjdump -sass` output on stdin. For every kernel whose (mangled) name contains PATTERN it
finds the longest backward branch (the main loop of a GEMM kernel: its body is the k-loop) and
prints the opcode counts of that loop body, e.g. how many HMMA (tensor-core) instructions there are
for each shared-memory load (LDS, LDSM) or generic load (LD). --listing prints the loop itself.
Exit status: 0 done, 1 no kernel matched, 2 bad usage (also: nothing on stdin, stdin a terminal, or
input with no kernel in it). Python stdlib only.
"""
import collections
import re
import sys

from wb import add_command

INSN = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)(.*?);")
BRANCH = re.compile(r"BRA\s+(?:`\(\.L_x_\d+\)|0x([0-9a-f]+))")


def kernels(lines):
    name, body = None, []
    for line in lines:
        m = re.search(r"Function : (\S+)", line)
        if m:
            if name:
                yield name, body
            name, body = m.group(1), []
            continue
        m = INSN.search(line)
        if name and m:
            body.append((int(m.group(1), 16), m.group(2), line.strip()))
    if name:
        yield name, body


def main_loop(body):
    """(first, last) index of the longest backward branch's loop, or None."""
    index = {addr: i for i, (addr, _, _) in enumerate(body)}
    best = None
    for i, (addr, op, text) in enumerate(body):
        m = BRANCH.search(text)
        if op.startswith("BRA") and m and m.group(1):
            target = int(m.group(1), 16)
            if target < addr and target in index and (best is None or i - index[target] > best[1] - best[0]):
                best = (index[target], i)
    return best


def register(sub):
    p = add_command(sub, "sass-loop", "the main loop of a kernel's SASS (cuobjdump -sass on stdin), counted", __doc__)
    p.add_argument("pattern", metavar="PATTERN", help="part of the (mangled) kernel name")
    p.add_argument("--listing", action="store_true", help="print the loop itself too")
    p.set_defaults(run=lambda a: main(a.pattern, a.listing))


HOW = "pipe a program's SASS into it: cuobjdump -sass PROGRAM | PYTHONPATH=tools python3 -m wb sass-loop PATTERN"


def main(pattern, listing=False):
    if sys.stdin.isatty():
        print(f"sass_loop: standard input is a terminal; {HOW}", file=sys.stderr)
        return 2
    found = 0
    listed = list(kernels(sys.stdin))
    if not listed:
        print(f"sass_loop: no kernel in the input (no 'Function :' line of cuobjdump -sass); {HOW}", file=sys.stderr)
        return 2
    for name, body in listed:
        if pattern not in name:
            continue
        found += 1
        loop = main_loop(body)
        print(f"== {name}\n   {len(body)} instructions in the kernel")
        if not loop:
            print("   no loop found")
            continue
        part = body[loop[0]:loop[1] + 1]
        ops = collections.Counter(op.split(".")[0] for _, op, _ in part)
        print(f"   main loop: {len(part)} instructions, 0x{part[0][0]:04x}..0x{part[-1][0]:04x}")
        print("   " + ", ".join(f"{op} {n}" for op, n in ops.most_common()))
        if listing:
            for _, _, text in part:
                print("   " + re.sub(r"/\* 0x[0-9a-f]+ \*/", "", text).rstrip())
    if not found:
        print(f"sass_loop: no kernel name contains '{pattern}'", file=sys.stderr)
        return 1
    return 0

