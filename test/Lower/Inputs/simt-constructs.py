import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=32) as bx:
        A_sh = T.alloc_shared((4096,), "float16")
        a = T.alloc_local((8,), "float16")
        c = T.alloc_local((4,), "float32")
        T.ptx_cp_async(A_sh, T.get_thread_binding(0) * 8, A, T.get_thread_binding(0) * 8, 16, T.get_thread_binding(0) < 32)
        T.ptx_commit_group()
        T.ptx_wait_group(0)
        T.sync_threads()
        T.ptx_ldmatrix(a, 0, A_sh, T.get_thread_binding(0) % 16 * 64, 4, False)
        T.ptx_mma(a, 0, a, 0, c, 0, "m16n8k16")
        C[T.get_thread_binding(0), T.Ramp(0, 1, 4)] = c[T.Ramp(0, 1, 4)]
        C[T.get_thread_binding(0) + 32, T.Ramp(0, 1, 4)] = T.Broadcast(T.float32(0), 4)
        for vi in T.vectorized(4):
            C[0, vi + 4] = T.Cast("float32", a[vi])
        for t in T.thread_binding(32, thread="threadIdx.x"):
            C[1, t] = T.float32(1)
        for t2 in T.thread_binding(2, 32):
            C[2, t2] = T.float32(2)
