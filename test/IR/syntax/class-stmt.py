# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: ClassDef(name='Kernel', bases=[], keywords=[], body=[Pass()], decorator_list=[])
class Kernel:
    pass
