# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: orelse=[Pass()]
for i in range(3):
    pass
else:
    pass
