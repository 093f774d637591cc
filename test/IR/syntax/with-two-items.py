# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: With(items=[withitem(context_expr=Name(id='a', ctx=Load()), optional_vars=Name(id='b', ctx=Store())), withitem(context_expr=Name(id='c', ctx=Load()), optional_vars=Name(id='d', ctx=Store()))]
with a as b, c as d:
    pass
