/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hsdbt's instrumentation: every taken branch of a translated block becomes a few IR
 * loads and stores into the running thread's ring (no helper call).
 *
 * Copyright (C) 2026 the Hindsight authors. This program is free software; you can
 * redistribute it and/or modify it under the terms of the GNU General Public License as
 * published by the Free Software Foundation; either version 2 of the License, or (at your
 * option) any later version. See tracer/dbt/LICENSE. */

#include "tracer/dbt/hsdbt.h"

static IRExpr* tmp_of(IRSB* sb, IRType ty, IRExpr* e) {
  IRTemp t = newIRTemp(sb->tyenv, ty);
  addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
  return IRExpr_RdTmp(t);
}

static IRExpr* u64(ULong v) { return IRExpr_Const(IRConst_U64(v)); }

/* Host words (the guest's too: a Valgrind tool runs programs of its own instruction set):
 * addresses, and the program counters VEX shows. The ring's fields are 64-bit on both. */
#if VG_WORDSIZE == 8
#define HS_WORD_TYPE Ity_I64
#define HS_WORD_OP(op) op##64
static IRExpr* word(HWord v) { return IRExpr_Const(IRConst_U64(v)); }
static IRExpr* widen_to_64(IRSB* sb, IRExpr* e) { (void)sb; return e; }
static IRExpr* narrow_to_word(IRSB* sb, IRExpr* e) { (void)sb; return e; }
static HWord constant_word(const IRConst* c) { return c->Ico.U64; }
#else
#define HS_WORD_TYPE Ity_I32
#define HS_WORD_OP(op) op##32
static IRExpr* word(HWord v) { return IRExpr_Const(IRConst_U32(v)); }
static IRExpr* widen_to_64(IRSB* sb, IRExpr* e) { return tmp_of(sb, Ity_I64, IRExpr_Unop(Iop_32Uto64, e)); }
static IRExpr* narrow_to_word(IRSB* sb, IRExpr* e) { return tmp_of(sb, Ity_I32, IRExpr_Unop(Iop_64to32, e)); }
static HWord constant_word(const IRConst* c) { return c->Ico.U32; }
#endif

/* Where a record the guard turns down goes: stores through a chosen address, not guarded
 * stores, which the x86 code generator does not have. Never read. */
static struct hs_dbt_sample hs_sink;

/* Appends to sb: if guard (NULL: always), sample {from, to} into the running thread's ring. */
static void add_record(IRSB* sb, Addr from, IRExpr* to, IRExpr* guard) {
  IRExpr* ring = tmp_of(sb, HS_WORD_TYPE, IRExpr_Load(Iend_LE, HS_WORD_TYPE, word((HWord)&hs_current)));
  IRExpr* head_at = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Add), ring, word(__builtin_offsetof(struct hs_dbt_ring_header, head))));
  IRExpr* head = tmp_of(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, head_at));
  IRExpr* index = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_And), narrow_to_word(sb, head), word(hs_capacity - 1)));
  IRExpr* offset = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Shl), index, IRExpr_Const(IRConst_U8(4))));
  IRExpr* base = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Add), ring, word(HS_DBT_RING_HEADER_SIZE)));
  IRExpr* slot = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Add), base, offset));
  IRExpr* next_head;
  if (guard == NULL) {
    next_head = tmp_of(sb, Ity_I64, IRExpr_Binop(Iop_Add64, head, u64(1)));
  } else {
    slot = tmp_of(sb, HS_WORD_TYPE, IRExpr_ITE(guard, slot, word((HWord)&hs_sink)));
    IRExpr* one_if = tmp_of(sb, HS_WORD_TYPE, IRExpr_Unop(HS_WORD_OP(Iop_1Uto), guard));
    next_head = tmp_of(sb, Ity_I64, IRExpr_Binop(Iop_Add64, head, widen_to_64(sb, one_if)));
  }
  IRExpr* slot_to = tmp_of(sb, HS_WORD_TYPE, IRExpr_Binop(HS_WORD_OP(Iop_Add), slot, word(8)));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, slot, u64(from)));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, slot_to, widen_to_64(sb, to)));
  addStmtToIRSB(sb, IRStmt_Store(Iend_LE, head_at, next_head));
}

/* Appends the record of a transfer to a target known only at run time: a branch unless it
 * goes on to the next instruction (which single-stepping does not count as one either). */
static void add_record_unless_next(IRSB* sb, Addr from, IRExpr* to, Addr next_insn) {
  IRExpr* elsewhere = tmp_of(sb, Ity_I1, IRExpr_Binop(HS_WORD_OP(Iop_CmpNE), to, word(next_insn)));
  add_record(sb, from, to, elsewhere);
}

/* The instruction at addr repeats itself (rep/repne string instructions, a lock prefix's
 * retried compare-and-swap): VEX shows that as a jump back to it, which is no branch. */
static Bool repeats_itself(Addr addr, UInt len) {
  const UChar* p = (const UChar*)addr;
  for (UInt i = 0; i < len; ++i) {
    switch (p[i]) {
      case 0xf0: case 0xf2: case 0xf3:
        return True;
      case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65: case 0x66: case 0x67:
        break;
      default:
        if (VG_WORDSIZE == 4 || (p[i] & 0xf0) != 0x40) {
          return False; /* the opcode, past legacy and (64-bit code's) REX prefixes */
        }
    }
  }
  return False;
}

IRSB* hs_instrument(VgCallbackClosure* closure, IRSB* in, const VexGuestLayout* layout,
                           const VexGuestExtents* extents, const VexArchInfo* arch, IRType gWordTy,
                           IRType hWordTy) {
  (void)closure;
  (void)layout;
  (void)extents;
  (void)arch;
  (void)hWordTy;
  if (gWordTy != HS_WORD_TYPE) {
    VG_(tool_panic)("hsdbt: a guest of another word size than the host's");
  }
  IRSB* out = deepCopyIRSBExceptStmts(in);
  Addr insn = 0;  /* the guest instruction the statements belong to */
  UInt insn_len = 0;
  for (Int i = 0; i < in->stmts_used; ++i) {
    IRStmt* st = in->stmts[i];
    if (st == NULL) {
      continue;
    }
    if (st->tag == Ist_IMark) {
      insn = (Addr)st->Ist.IMark.addr;
      insn_len = st->Ist.IMark.len;
    } else if (st->tag == Ist_Exit && st->Ist.Exit.jk == Ijk_Boring && insn != 0) {
      /* A side exit: a conditional branch, unless it only goes on to the next instruction
       * (the condition inverted: the block's end is the branch then) or back to this one for
       * a rep or lock prefix (the instruction repeats; no branch). */
      const Addr dst = constant_word(st->Ist.Exit.dst);
      if (dst != insn + insn_len && !(dst == insn && repeats_itself(insn, insn_len))) {
        add_record(out, insn, word(dst), st->Ist.Exit.guard);
      }
    }
    addStmtToIRSB(out, st);
  }
  /* The block's end: a call, a return, a jump (direct or not), or straight on. A transfer to
   * the next instruction (a block split, `call .+5`, a jump through a lazy PLT slot) is none. */
  const IRJumpKind jk = in->jumpkind;
  if (insn != 0 && (jk == Ijk_Boring || jk == Ijk_Call || jk == Ijk_Ret)) {
    IRExpr* next = in->next;
    const Addr next_insn = insn + insn_len;
    if (next->tag != Iex_Const) {
      add_record_unless_next(out, insn, next, next_insn);
    } else {
      const Addr dst = constant_word(next->Iex.Const.con);
      if (dst != next_insn && !(dst == insn && repeats_itself(insn, insn_len))) {
        add_record(out, insn, next, NULL);
      }
    }
  }
  return out;
}
