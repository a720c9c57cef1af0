/*
 * typemem.h - typing of the memory-space intrinsics (the GJ_TR_MEMORY rows
 * of intrinsics.h): gpujit.shared.array(shape, dtype),
 * gpujit.local.array(shape, dtype) and gpujit.const.array_like(ary).
 * typeinfer.c calls it for such a call; lower_array.c lowers the call.
 */
#ifndef GJ_TYPEMEM_H
#define GJ_TYPEMEM_H

#include "ir.h"

/* The type of `call` (a CALL of intrinsic `intrinsic`, arguments already
   positional): an array in the row's address space.  temp_types and defs
   (the instruction defining each temp of the call's block) are
   typeinfer.c's; a constant shape is read from the defining instructions.
   Returns NULL with *why set (an arena string; NULL when out of memory)
   when the call is ill-typed: a TYPING error at the call. */
const GjType *gj_memory_call_type(GjCtx *c, const GjIns *call, const GjType *const *temp_types,
                                  const GjIns *const *defs, int intrinsic, const char **why);

#endif
