"""test_sass_loop.py - tests of `python3 -m wb sass-loop` (tools/wb/sass_loop.py) on a made-up
`cuobjdump -sass` listing, no GPU. Run with pytest (make test runs it).
"""
import subprocess
import sys

from wb import sass_loop

# Two kernels in the layout cuobjdump prints: a prologue, an inner loop of 3 instructions nested in
# an outer loop (the longest backward branch: 0x0030 .. 0x00b0), an epilogue.
LISTING = """
	code for sm_90
		Function : _Z6kernelI10Tf32InputsEvv
	.headerflags	@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                      /* 0x00000a00ff017b82 */
                                                                               /* 0x000fe20000000800 */
        /*0010*/                   S2R R0, SR_TID.X ;                          /* 0x0000000000007919 */
        /*0020*/                   MOV R2, RZ ;                                /* 0x000000ff00027202 */
        /*0030*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;               /* 0x0000000000007b1d */
        /*0040*/                   LDS R4, [R0+0x10] ;                         /* 0x0000100000047984 */
        /*0050*/                   HMMA.1684.F32.TF32 R8, R4, R6, R8 ;         /* 0x000000060408723c */
        /*0060*/              @!P0 IMAD.IADD.U32 R4, R4, 0x1, R3 ;              /* 0x0000000104048824 */
        /*0070*/               @P1 BRA 0x40 ;                                  /* 0x0000000000001947 */
        /*0080*/                   HMMA.1684.F32.TF32 R12, R4, R6, R12 ;       /* 0x00000006040c723c */
        /*0090*/                   LD.E R5, desc[UR4][R10.64] ;                /* 0x0000000404057980 */
        /*00a0*/                   ISETP.GE.AND P0, PT, R2, 0x10, PT ;         /* 0x000000100200780c */
        /*00b0*/              @!P0 BRA 0x30 ;                                  /* 0x0000000000008947 */
        /*00c0*/                   STG.E desc[UR4][R2.64], R8 ;                /* 0x0000000802007986 */
        /*00d0*/                   EXIT ;                                      /* 0x000000000000794d */
		..........
		Function : _Z6kernelI10Fp16InputsEvv
        /*0000*/                   MOV R2, RZ ;                                /* 0x000000ff00027202 */
        /*0010*/                   EXIT ;                                      /* 0x000000000000794d */
"""


def run_tool(*args, stdin=LISTING):
    return subprocess.run([sys.executable, "-m", "wb", "sass-loop", *args], input=stdin,
                          capture_output=True, text=True)


class TestSassLoop:
    def test_finds_the_outer_loop_and_counts_its_opcodes(self):
        (name, body), (name2, body2) = list(sass_loop.kernels(LISTING.splitlines()))
        assert name == "_Z6kernelI10Tf32InputsEvv"
        assert len(body) == 14  # encoding-only lines are not instructions
        first, last = sass_loop.main_loop(body)
        assert (body[first][0], body[last][0]) == (0x30, 0xB0)  # the longest backward branch
        assert sass_loop.main_loop(body2) is None  # no loop at all

    def test_command_line_report(self):
        r = run_tool("Tf32Inputs")
        assert r.returncode == 0, r.stderr
        assert "main loop: 9 instructions, 0x0030..0x00b0" in r.stdout
        assert "HMMA 2" in r.stdout  # predicated instructions are counted by their opcode
        assert "IMAD 1" in r.stdout
        assert "LDS 1" in r.stdout
        assert "LD 1" in r.stdout
        assert "STG" not in r.stdout  # outside the loop
        listing = run_tool("Tf32Inputs", "--listing").stdout
        assert "HMMA.1684.F32.TF32 R12, R4, R6, R12" in listing
        assert "0x000000060408723c" not in listing  # encodings are dropped

    def test_no_match_and_bad_usage(self):
        r = run_tool("NoSuchKernel")
        assert r.returncode == 1
        assert "no kernel name contains" in r.stderr
        assert run_tool().returncode == 2
        assert run_tool("a", "b").returncode == 2
        assert run_tool("a", "--bogus").returncode == 2
        assert "no loop found" in run_tool("Fp16Inputs").stdout

    def test_empty_input_or_no_sass_says_what_to_pipe_in(self):
        for stdin in ("", "nvcc fatal : no such file\n"):
            r = run_tool("Tf32Inputs", stdin=stdin)
            assert r.returncode == 2
            assert r.stderr.count("\n") == 1, r.stderr  # one line
            assert "no kernel in the input" in r.stderr
            assert "cuobjdump -sass PROGRAM |" in r.stderr
