/*
 * lower_array.h - arrays (lower_array.c): sizes and shapes, element
 * addresses, loads, stores and views (the IR's GETITEM and SETITEM on
 * arrays), frozen NumPy arrays in constant memory, shared memory, and the
 * memory-space family of intrinsics (shared.array, local.array,
 * const.array_like).
 *
 * Element accesses take `subject`, which names the array for an IndexError
 * ("array 'a'"): under boundscheck each index is checked against its axis
 * (lower_error.h), so the builder may end in a new block; NULL where the
 * index is in bounds by construction (an iterator's) or nothing is checked.
 */
#ifndef GJ_LOWER_ARRAY_H
#define GJ_LOWER_ARRAY_H

#include "lower_base.h"

LLVMValueRef gj_lower_array_size(GjLower *L, LLVMValueRef arr, const GjType *at);
/* arr.shape or arr.strides (field 1 or 2) as a value of tuple_ty. */
LLVMValueRef gj_lower_array_dims_tuple(GjLower *L, LLVMValueRef arr, const GjType *at,
                                       unsigned field, LLVMTypeRef tuple_ty);
/* The address of arr[idx] (an integer, or a tuple of one per axis), in
   the address space of at's data. */
LLVMValueRef gj_lower_element_ptr(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                  const GjType *it, const char *subject);
/* arr[idx] (an integer, or a tuple of one per axis), in the dtype's value form. */
LLVMValueRef gj_lower_load_element(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                   const GjType *it, const char *subject);
/* arr[idx] = v, v cast to the dtype. */
GjStatus gj_lower_store_element(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                const GjType *it, LLVMValueRef v, const GjType *vt,
                                const char *subject);
/* arr[idx] as a view of type rt (integers fix axes, and are checked; slices
   keep them, clamped as Python clamps). */
LLVMValueRef gj_lower_array_view(GjLower *L, LLVMValueRef arr, const GjType *at, LLVMValueRef idx,
                                 const GjType *it, const GjType *rt, const char *subject);
/* A frozen NumPy array as a readonly array value of type rt. */
LLVMValueRef gj_lower_const_array(GjLower *L, const GjConstArray *a, const GjType *rt);
/* The module's static shared memory in bytes (a 16-byte multiple), as an
   i64 that is constant once lowering ends: where the dynamic part starts. */
LLVMValueRef gj_lower_shared_static_total(GjLower *L);
/* After lowering: the static shared bytes, for the launch plan. */
uint64_t gj_lower_shared_finish(GjLower *L);
/* Bytes the module keeps in constant memory: frozen arrays, and the tables
   and strings lowering puts there (cmath's, print's), as i8 arrays. */
uint64_t gj_lower_const_bytes(GjLower *L);

/* The memory-space rows: shared.array and local.array (the row's sub is
   the GjAddrSpace), const.array_like. */
LLVMValueRef gj_lower_memory_array(GjLower *L, const GjIntrCall *call);
LLVMValueRef gj_lower_const_array_like(GjLower *L, const GjIntrCall *call);

#endif
