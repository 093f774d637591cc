# RUN: %tl-opt --emit=ast %s | FileCheck %s
# CHECK: JoinedStr(values=[Constant(value='hello '), FormattedValue(value=Name(id='name', ctx=Load()), conversion=-1)])
name = "x"
msg = f"hello {name}"
