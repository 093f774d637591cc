# Kernels of the launch-overhead benchmarks (issue 16, acceptance 5: the host
# cost of tl_kernel_call at 0 and at 19 arguments, benchmarks/launch/): one
# block each, so the GPU time is small and the host sets the pace.
#   launch0:  no parameters; one block of 32 threads, each writes a shared
#             word (the kernel has no effect outside the block).
#   launch19: 19 float32 tensors of N elements, out = A0 + ... + A17 (the
#             caller passes out: out_idx none), one block of N threads.
import tilelang
import tilelang.language as T


@tilelang.jit
def launch0(threads=32):

    @T.prim_func
    def launch0_main():
        with T.Kernel(1, threads=threads) as bx:
            S = T.alloc_shared((threads,), "int32")
            for i in T.Parallel(threads):
                S[i] = bx + i

    return launch0_main


@tilelang.jit
def launch19(N=128):

    @T.prim_func
    def launch19_main(A0: T.Tensor((N,), "float32"), A1: T.Tensor((N,), "float32"), A2: T.Tensor((N,), "float32"), A3: T.Tensor((N,), "float32"), A4: T.Tensor((N,), "float32"), A5: T.Tensor((N,), "float32"), A6: T.Tensor((N,), "float32"), A7: T.Tensor((N,), "float32"), A8: T.Tensor((N,), "float32"), A9: T.Tensor((N,), "float32"), A10: T.Tensor((N,), "float32"), A11: T.Tensor((N,), "float32"), A12: T.Tensor((N,), "float32"), A13: T.Tensor((N,), "float32"), A14: T.Tensor((N,), "float32"), A15: T.Tensor((N,), "float32"), A16: T.Tensor((N,), "float32"), A17: T.Tensor((N,), "float32"),
                      out: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=N) as bx:
            for i in T.Parallel(N):
                out[i] = A0[i] + A1[i] + A2[i] + A3[i] + A4[i] + A5[i] + A6[i] + A7[i] + A8[i] + A9[i] + A10[i] + A11[i] + A12[i] + A13[i] + A14[i] + A15[i] + A16[i] + A17[i]

    return launch19_main
