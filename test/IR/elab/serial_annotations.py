# RUN: not %tl-opt %s 2>&1 | FileCheck %s
# RUN: not %tl-opt --kernel=with_step %s 2>&1 | FileCheck %s --check-prefix=STEP
# T.serial's annotations= takes only "num_stages" (>= 2): the stage count the
# pipeline pass leaves on the serial loop it makes (docs/canonical-tir.md).
# Anything else is refused at the annotation, with its location; a stage
# count on a loop with a step is refused by the verifier.
import tilelang.language as T


@T.prim_func
def other_key(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for k in T.serial(8, annotations={"software_pipeline_stage": [0, 1]}):
            A[k] = 1.0


@T.prim_func
def one_stage(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for k in T.serial(8, annotations={"num_stages": 1}):
            A[k] = 1.0


@T.prim_func
def not_a_dict(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for k in T.serial(8, annotations=2):
            A[k] = 1.0


@T.prim_func
def with_step(A: T.Tensor((8,), "float32")):
    with T.Kernel(1, threads=32) as bx:
        for k in T.serial(0, 8, 2, annotations={"num_stages": 2}):
            A[k] = 1.0

# CHECK: serial_annotations.py:13:42: error: T.serial: only the annotation "num_stages" is supported
# CHECK: serial_annotations.py:20:42: error: T.serial: annotation num_stages must be in [2, 1000000], got 1
# CHECK: serial_annotations.py:27:42: error: T.serial: annotations must be a dict
# STEP: serial_annotations.py:34:9: error: num_stages=2 on a loop other than a one-variable T.serial without a step
