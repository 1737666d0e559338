# GDB script for test_dbt.cpp: from diff_begin to diff_end, single-step the program (through
# Valgrind's own gdbserver) and print each taken control transfer as "BRANCH FROM TO": a step
# that lands anywhere but the next instruction (an instruction that repeats, `rep movsb`, is
# none).
import gdb

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("break *diff_begin")
gdb.execute("continue")
gdb.execute("delete")
end = int(gdb.parse_and_eval("(unsigned long)&diff_end"))
arch = gdb.selected_frame().architecture()
pc = int(gdb.parse_and_eval("(unsigned long)$pc"))
steps = 0
while pc != end and steps < 200000:
    length = arch.disassemble(pc)[0]["length"]
    gdb.execute("stepi", to_string=True)
    steps += 1
    now = int(gdb.parse_and_eval("(unsigned long)$pc"))
    if now != pc + length and now != pc:
        print("BRANCH %x %x" % (pc, now))
    pc = now
print("STEPS %d %s" % (steps, "end" if pc == end else "cut"))
gdb.execute("kill")
