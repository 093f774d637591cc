/* Source lines in the PTX: LLVM debug locations from the IR's
 * statement locations, so that the NVPTX backend writes `.file N "path"` and
 * `.loc N LINE COL` (docs/codegen.md "Line information").
 *
 * One compile unit per module, of emission kind DebugDirectivesOnly: the
 * backend then writes only the .file/.loc directives, with no DWARF sections
 * and no `, debug` on .target (which LineTablesOnly brings, and which makes
 * ptxas compile as for -G).  The C API has no enumerator for that kind; its
 * value in LLVM's DICompileUnit::DebugEmissionKind is 3, and
 * LLVMDIBuilderCreateCompileUnit passes the number through.  One DISubprogram
 * per kernel; a statement whose location is in another file than the
 * kernel's (a helper of an imported module) gets a DILexicalBlockFile scope
 * for that file.  The path in .file is the file's name as the compiler was
 * given it (tl_loc.file), never made absolute, so the PTX of one command is
 * the same on every machine and in every directory it is run from.
 *
 * Every statement sets the builder's location (cg_debug_set) before its
 * instructions are built and its parent's is restored after it, so that a
 * loop's latch and a branch's join carry the loop's or the if's line. */
#include "NVPTX/codegen_internal.h"

#include <llvm-c/DebugInfo.h>

#include <string.h>

/* DICompileUnit::DebugDirectivesOnly (llvm/IR/DebugInfoMetadata.h). */
#define TL_DI_DEBUG_DIRECTIVES_ONLY ((LLVMDWARFEmissionKind)3)

static LLVMMetadataRef di_file(cg *g, const char *path) {
  if (!path || !*path) path = "<unknown>";
  for (int i = 0; i < g->di_nfiles; i++)
    if (g->di_paths[i] == path || strcmp(g->di_paths[i], path) == 0) return g->di_files[i];
  LLVMMetadataRef f = LLVMDIBuilderCreateFile(g->dib, path, strlen(path), "", 0);
  if (g->di_nfiles < TL_CG_MAX_DI_FILES) {
    g->di_paths[g->di_nfiles] = path;
    g->di_files[g->di_nfiles] = f;
    g->di_scopes[g->di_nfiles] = NULL;
    g->di_nfiles++;
  }
  return f;
}

void cg_debug_begin_module(cg *g, const char *filename) {
  if (!g->line_info) return;
  g->dib = LLVMCreateDIBuilderDisallowUnresolved(g->M);
  LLVMMetadataRef file = di_file(g, filename);
  static const char producer[] = "tilelang-ptx";
  g->di_cu = LLVMDIBuilderCreateCompileUnit(g->dib, LLVMDWARFSourceLanguagePython, file, producer, sizeof producer - 1,
                                            1, "", 0, 0, "", 0, TL_DI_DEBUG_DIRECTIVES_ONLY, 0, 0, 0, "", 0, "", 0);
  LLVMAddModuleFlag(g->M, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18,
                    LLVMValueAsMetadata(LLVMConstInt(g->t_i32, LLVMDebugMetadataVersion(), 0)));
  LLVMAddModuleFlag(g->M, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13,
                    LLVMValueAsMetadata(LLVMConstInt(g->t_i32, 2, 0)));
}

void cg_debug_end_module(cg *g) {
  if (!g->dib) return;
  LLVMDIBuilderFinalize(g->dib);
  LLVMDisposeDIBuilder(g->dib);
  g->dib = NULL;
}

void cg_debug_begin_func(cg *g, const tl_primfunc *f) {
  g->di_sp = NULL;
  g->di_cur = TL_LOC_NONE;
  for (int i = 0; i < g->di_nfiles; i++) g->di_scopes[i] = NULL; /* lexical blocks are per function */
  if (!g->dib) return;
  const char *path = f->loc.file ? f->loc.file : g->di_paths[0];
  LLVMMetadataRef file = di_file(g, path);
  LLVMMetadataRef ty = LLVMDIBuilderCreateSubroutineType(g->dib, file, NULL, 0, LLVMDIFlagZero);
  unsigned line = f->loc.line > 0 ? (unsigned)f->loc.line : 0;
  g->di_sp = LLVMDIBuilderCreateFunction(g->dib, file, f->name, strlen(f->name), f->name, strlen(f->name), file, line,
                                         ty, 0, 1, line, LLVMDIFlagZero, 1);
  g->di_sp_path = path;
  LLVMSetSubprogram(g->fn, g->di_sp);
  LLVMSetCurrentDebugLocation2(g->B, NULL);
}

void cg_debug_end_func(cg *g) {
  if (g->di_sp) LLVMDIBuilderFinalizeSubprogram(g->dib, g->di_sp);
  g->di_sp = NULL;
  g->di_cur = TL_LOC_NONE;
  if (g->B) LLVMSetCurrentDebugLocation2(g->B, NULL);
}

/* The scope of a location in file `path` inside the current kernel. */
static LLVMMetadataRef scope_for(cg *g, const char *path) {
  if (path == g->di_sp_path || strcmp(path, g->di_sp_path) == 0) return g->di_sp;
  LLVMMetadataRef file = di_file(g, path);
  for (int i = 0; i < g->di_nfiles; i++) {
    if (g->di_files[i] != file) continue;
    if (!g->di_scopes[i]) g->di_scopes[i] = LLVMDIBuilderCreateLexicalBlockFile(g->dib, g->di_sp, file, 0);
    return g->di_scopes[i];
  }
  return LLVMDIBuilderCreateLexicalBlockFile(g->dib, g->di_sp, file, 0); /* past TL_CG_MAX_DI_FILES */
}

tl_loc cg_debug_set(cg *g, tl_loc loc) {
  tl_loc prev = g->di_cur;
  if (!g->di_sp || loc.line <= 0) return prev; /* no location: the enclosing statement's stays */
  if (loc.line == prev.line && loc.col == prev.col && loc.file == prev.file) return prev;
  const char *path = loc.file ? loc.file : g->di_sp_path;
  LLVMMetadataRef dl = LLVMDIBuilderCreateDebugLocation(g->C, (unsigned)loc.line, loc.col > 0 ? (unsigned)loc.col : 0,
                                                        scope_for(g, path), NULL);
  LLVMSetCurrentDebugLocation2(g->B, dl);
  g->di_cur = loc;
  return prev;
}

void cg_debug_restore(cg *g, tl_loc prev) {
  if (!g->di_sp) return;
  if (prev.line <= 0) {
    g->di_cur = prev; /* before the first statement: keep the current one (instructions need not lose it) */
    return;
  }
  cg_debug_set(g, prev);
}
