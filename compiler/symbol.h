/*
 * symbol.h - the names of what gpujit puts in an LLVM module, and so in PTX
 * and host code (symbol.c).  Grep tag: GJ_SYMBOL_NAMES.
 *
 * PTX takes a name of ASCII letters, digits, '_' and '$' that does not start
 * with a digit ('%' too, which LLVM's NVPTX printer refuses); LLVM ends the
 * process on any other ("Symbol name with unsupported characters").  Two
 * kinds of names meet in a module, and they never collide:
 *
 *   - names made of Python names, of [A-Za-z0-9_] alone: a kernel is
 *     "_gj_" + its qualname and a device function "_gj_dev_" + its qualname,
 *     each byte outside [A-Za-z0-9_] made '_' (gj_sym_of_python_name); a C
 *     ABI function (compile_ptx(abi="c")) is its __name__ made so, or the
 *     abi_name the user chose, which must be a C identifier already
 *     (gj_sym_c_name_problem).  Two Python names may give one symbol
 *     ("f_g" and "f.g"); a module holds one kernel, and LLVM renames a
 *     device function whose name is taken.
 *   - gpujit's own, with a character no such name has: "gj.<name>" for
 *     internal symbols (NVPTX prints the '.' as "_$_"), "gj$<name>" for the
 *     two that PTX keeps external: GJ_ERROR_RECORD_SYMBOL and the dynamic
 *     shared array.
 *
 * The external functions a module calls keep their own names (vprintf,
 * libdevice's __nv_*): a C ABI name may not be one of them.
 */
#ifndef GJ_SYMBOL_H
#define GJ_SYMBOL_H

/* prefix + name with every byte outside [A-Za-z0-9_] made '_' ("_gj_" and
   "test_x.<locals>.ok" give "_gj_test_x__locals__ok"); malloc'd, NULL when
   out of memory. */
char *gj_sym_of_python_name(const char *prefix, const char *name);

/* NULL when name can be a C ABI function's PTX name: a C identifier (ASCII
   letters, digits and '_', not starting with a digit) but "_" alone (PTX's
   grammar: [a-zA-Z][a-zA-Z0-9_$]* or [_$%][a-zA-Z0-9_$]+) that is not a
   function gpujit's PTX calls; else why not, a phrase for a message
   ("starts with a digit"). */
const char *gj_sym_c_name_problem(const char *name);

#endif
