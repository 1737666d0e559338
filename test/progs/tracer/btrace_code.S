# Code with a known control flow for the branch-trace tests: every branch instruction and
# branch target has a label, so the tests can spell out the exact samples expected.
        .text

# bt_run: a loop of three calls, a rep string instruction, a system call, a jump.
        .globl bt_run, bt_loop, bt_call, bt_after_call, bt_jnz, bt_jmp, bt_jmp_target, bt_end
        .globl bt_leaf, bt_leaf_ret
bt_run:
        push    %rbx
        mov     $3, %ebx
bt_loop:
bt_call:
        call    bt_leaf
bt_after_call:
        dec     %ebx
bt_jnz:
        jnz     bt_loop
        lea     bt_buf(%rip), %rdi
        mov     $4, %ecx
        xor     %eax, %eax
        rep stosb
        mov     $39, %eax               # getpid: not a branch
        syscall
bt_jmp:
        jmp     bt_jmp_target
        ud2
bt_jmp_target:
        nop
bt_end:
        pop     %rbx
        ret

bt_leaf:
        nop
        nop
bt_leaf_ret:
        ret

# bt_raise: sends itself SIGUSR1 with tgkill; bt_handler is the handler the program installs.
        .globl bt_raise, bt_raise_syscall, bt_raise_after, bt_raise_end, bt_handler, bt_handler_ret
bt_raise:
        mov     $39, %eax               # getpid
        syscall
        mov     %eax, %edi
        mov     %eax, %esi
        mov     $10, %edx               # SIGUSR1
        mov     $234, %eax              # tgkill
bt_raise_syscall:
        syscall
bt_raise_after:
        nop
bt_raise_end:
        ret

bt_handler:
        nop
bt_handler_ret:
        ret

# bt_work(n): n calls of bt_leaf (the threads test).
        .globl bt_work, bt_work_end
bt_work:
        mov     %edi, %ecx
1:
        push    %rcx
        call    bt_leaf
        pop     %rcx
        loop    1b
bt_work_end:
        ret

        .bss
bt_buf: .skip 16
        .section .note.GNU-stack,"",@progbits
